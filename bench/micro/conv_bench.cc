// Conv layers at real vocoder shapes (LTX-2.3 / BigVGAN-v2 16 kHz vocoder on 4 s of audio:
// conv_pre T = 400 frames, then ×5, ×2, ×2, ×2, ×2, ×2 up to T = 64000 samples; BWE upsampler;
// the MiniMax-H3 encoder's stages on 1 s).
//
// Case names are the shape keys that bench/torch/torch_conv_bench.py parses, so its --ours option
// can join the two runs and print ratios:
//   conv_ci<C_in>_co<C_out>_k<K>_s<stride>_d<dilation>_T<T>   "same" padded Conv1d
//   deconv_ci<C_in>_co<C_out>_k<K>_s<stride>_T<T>            ConvTranspose1d, padding (k − s)//2
// Suffixes: /fp32 /bf16 /bf16x2 /bf16x3 (precision), /pad16 (channel
// counts rounded up to a multiple of 16 — the channel-alignment experiment; real FLOPs counted),
// /direct /winograd /onednn (fp32 under MESHNN_CONV_ALGO=<that>; /fp32 is the default choice);
// deconv /polyphase /onednn (fp32 under MESHNN_DECONV_ALGO=<that>).
// GFLOP/s of the fast algorithms is "direct-equivalent": the direct algorithm's FLOPs / time.
// GFLOP/s counts 2·T_out·C_out·C_in·K per call (the real, unpadded work).
//
//   OMP_NUM_THREADS=2 meshnn_microbench --benchmark_filter=conv --benchmark_format=json > ours.json
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "meshnn/core/precision.h"
#include "meshnn/layers/conv.h"

namespace {

using namespace meshnn;

struct Key {
  bool deconv = false;
  int64_t ci = 0, co = 0, k = 0, s = 1, d = 1, t = 0;
};

Key parse(const std::string& key) {
  Key k;
  long ci, co, kk, s, d = 1, t;
  if (std::sscanf(key.c_str(), "conv_ci%ld_co%ld_k%ld_s%ld_d%ld_T%ld", &ci, &co, &kk, &s, &d, &t) ==
      6) {
  } else if (std::sscanf(key.c_str(), "deconv_ci%ld_co%ld_k%ld_s%ld_T%ld", &ci, &co, &kk, &s, &t) ==
             5) {
    k.deconv = true;
  } else {
    std::fprintf(stderr, "bad bench key %s\n", key.c_str());
    std::abort();
  }
  k.ci = ci, k.co = co, k.k = kk, k.s = s, k.d = d, k.t = t;
  return k;
}

int64_t round16(int64_t c) { return (c + 15) / 16 * 16; }

void run_case(benchmark::State& state, const std::string& key, Precision prec, bool pad16,
              const char* algo = nullptr) {
  // The algorithm override is read at layer construction: set it for this layer only.
  struct EnvAlgo {
    explicit EnvAlgo(const char* a) : set(a != nullptr) {
      if (set) setenv("MESHNN_CONV_ALGO", a, 1);
    }
    ~EnvAlgo() {
      if (set) unsetenv("MESHNN_CONV_ALGO");
    }
    bool set;
  };
  const Key k = parse(key);
  const int64_t ci = pad16 ? round16(k.ci) : k.ci, co = pad16 ? round16(k.co) : k.co;
  std::unique_ptr<ConvLayerBase> layer;
  Tensor w;
  if (k.deconv) {
    ConvTranspose1dConfig c;
    c.in_channels = ci;
    c.out_channels = co;
    c.kernel_size = k.k;
    c.stride = k.s;
    c.precision = prec;
    auto l = std::make_unique<ConvTranspose1d>(c, key);
    if (algo) setenv("MESHNN_DECONV_ALGO", algo, 1);  // read when the weights are set
    l->set_weights(Tensor({ci, co, k.k}), Tensor({co}));
    if (algo) unsetenv("MESHNN_DECONV_ALGO");
    layer = std::move(l);
  } else {
    Conv1dConfig c;
    c.in_channels = ci;
    c.out_channels = co;
    c.kernel_size = k.k;
    c.stride = k.s;
    c.dilation = k.d;
    c.precision = prec;
    auto l = std::make_unique<Conv1d>(c, key);
    const EnvAlgo env(algo);
    l->set_weights(Tensor({co, ci, k.k}), Tensor({co}));
    layer = std::move(l);
  }
  Tensor x({1, k.t, ci});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = float((i * 7919) % 201 - 100) * 0.01f;
  const Shape ys = layer->output_shape(x.shape());
  Tensor y(ys);  // allocated and touched once, as a model arena would be
  state.SetLabel(layer->impl_info(x.shape()));
  layer->forward_into(x, y);  // warm-up: plan, packing, page faults
  for (auto _ : state) {
    layer->forward_into(x, y);
    benchmark::DoNotOptimize(y.raw());
  }
  const double flop = 2.0 * double(ys[1]) * double(k.co) * double(k.ci) * double(k.k) /
                      (k.deconv ? double(k.s) : 1.0);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

const std::vector<std::string> kConvKeys = {
    "conv_ci128_co1536_k7_s1_d1_T400",  // conv_pre
    "conv_ci768_co768_k3_s1_d1_T2000",  // AMP stage 0
    "conv_ci768_co768_k7_s1_d3_T2000",
    "conv_ci768_co768_k11_s1_d5_T2000",
    "conv_ci384_co384_k7_s1_d3_T4000",
    "conv_ci192_co192_k7_s1_d3_T8000",
    "conv_ci96_co96_k7_s1_d3_T16000",
    "conv_ci96_co96_k11_s1_d5_T16000",
    "conv_ci48_co48_k7_s1_d3_T32000",
    "conv_ci24_co24_k3_s1_d1_T64000",
    "conv_ci24_co24_k7_s1_d3_T64000",
    "conv_ci24_co24_k11_s1_d5_T64000",
    "conv_ci24_co2_k7_s1_d1_T64000",  // conv_post
    // LTX-2.3 BWE generator (512 channels, rates 6-5-2-2-2) on 4 s of 48 kHz output
    "conv_ci128_co128_k7_s1_d3_T24000",
    "conv_ci32_co32_k7_s1_d3_T96000",
    "conv_ci16_co16_k11_s1_d5_T192000",
    "conv_ci64_co512_k7_s1_d1_T800",
    "conv_ci256_co256_k7_s1_d3_T4800",
    "conv_ci64_co64_k7_s1_d3_T48000",
};
const std::vector<std::string> kDeconvKeys = {
    "deconv_ci1536_co768_k11_s5_T400",  // ups.0
    "deconv_ci1536_co768_k11_s5_T1000",
    "deconv_ci768_co384_k4_s2_T2000",  // ups.1
    "deconv_ci96_co48_k4_s2_T16000",   // ups.4
    "deconv_ci48_co24_k4_s2_T32000",   // ups.5
    "deconv_ci512_co256_k12_s6_T400",  // BWE ups.0
};
// MiniMax-H3 encoder on 1 s of mono 32 kHz audio: each stage's residual-unit k7 (d3) and k1 convs
// at its width and rate, then its strided conv (k 2s, stride s).
const std::vector<std::string> kH3EncoderKeys = {
    "conv_ci64_co64_k7_s1_d3_T32000",    "conv_ci64_co64_k1_s1_d1_T32000",
    "conv_ci64_co128_k4_s2_d1_T32000",   "conv_ci128_co128_k7_s1_d3_T16000",
    "conv_ci128_co128_k1_s1_d1_T16000",  "conv_ci128_co256_k8_s4_d1_T16000",
    "conv_ci256_co256_k7_s1_d3_T4000",   "conv_ci256_co256_k1_s1_d1_T4000",
    "conv_ci256_co512_k8_s4_d1_T4000",   "conv_ci512_co512_k7_s1_d3_T1000",
    "conv_ci512_co512_k1_s1_d1_T1000",   "conv_ci512_co1024_k10_s5_d1_T1000",
    "conv_ci1024_co1024_k7_s1_d3_T200",  "conv_ci1024_co1024_k1_s1_d1_T200",
    "conv_ci1024_co2048_k10_s5_d1_T200",
};
// MiniMax-H3 decoder's thin late bands on 1 s of mono 32 kHz audio (AMP convs: dilated, then d1).
const std::vector<std::string> kH3DecoderKeys = {
    "conv_ci32_co32_k3_s1_d1_T8000",  "conv_ci32_co32_k11_s1_d1_T8000",
    "conv_ci32_co32_k11_s1_d5_T8000", "conv_ci16_co16_k3_s1_d1_T16000",
    "conv_ci16_co16_k7_s1_d1_T16000", "conv_ci16_co16_k11_s1_d1_T16000",
    "conv_ci16_co16_k7_s1_d3_T16000", "conv_ci8_co8_k3_s1_d1_T32000",
    "conv_ci8_co8_k7_s1_d1_T32000",   "conv_ci8_co8_k11_s1_d1_T32000",
    "conv_ci8_co8_k11_s1_d5_T32000",
};
// Odd channel counts for the alignment experiment (C = 24, 48, 96 at long T).
const std::vector<std::string> kAlignKeys = {
    "conv_ci24_co24_k7_s1_d3_T64000", "conv_ci48_co48_k7_s1_d3_T32000",
    "conv_ci96_co96_k7_s1_d3_T16000", "conv_ci24_co24_k7_s1_d1_T64000",
    "deconv_ci48_co24_k4_s2_T32000",
};
// Shapes for the precision modes.
const std::vector<std::string> kLeverKeys = {
    "conv_ci768_co768_k7_s1_d3_T2000",
    "conv_ci96_co96_k7_s1_d3_T16000",
    "conv_ci24_co24_k7_s1_d3_T64000",
};

int register_all() {
  // key + suffix, e.g. "…/fp32" or "…/" + algo; algo (nullptr: the default choice) is passed on.
  auto reg = [](const std::string& key, const std::string& suffix, Precision p, bool pad,
                const char* algo = nullptr) {
    benchmark::RegisterBenchmark((key + suffix).c_str(),
                                 [=](benchmark::State& s) { run_case(s, key, p, pad, algo); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.3);
  };
  for (const auto& k : kConvKeys) reg(k, "/fp32", Precision::fp32, false);
  for (const char* algo : {"direct", "winograd", "onednn"})
    for (const auto& k : kConvKeys) reg(k, std::string("/") + algo, Precision::fp32, false, algo);
  for (const auto* keys : {&kH3EncoderKeys, &kH3DecoderKeys}) {
    for (const auto& k : *keys) reg(k, "/fp32", Precision::fp32, false);
    for (const char* algo : {"direct", "winograd", "gemm", "onednn"})
      for (const auto& k : *keys) reg(k, std::string("/") + algo, Precision::fp32, false, algo);
  }
  for (const auto& k : kDeconvKeys) reg(k, "/fp32", Precision::fp32, false);
  for (const char* algo : {"polyphase", "onednn"})
    for (const auto& k : kDeconvKeys) reg(k, std::string("/") + algo, Precision::fp32, false, algo);
  for (const auto& k : kAlignKeys) {
    if (std::find(kConvKeys.begin(), kConvKeys.end(), k) == kConvKeys.end() &&
        std::find(kDeconvKeys.begin(), kDeconvKeys.end(), k) == kDeconvKeys.end())
      reg(k, "/fp32", Precision::fp32, false);
    reg(k, "/pad16", Precision::fp32, true);
  }
  for (const auto& k : kLeverKeys) {
    reg(k, "/bf16", Precision::bf16, false);
    reg(k, "/bf16x2", Precision::bf16x2, false);
    reg(k, "/bf16x3", Precision::bf16x3, false);
  }
  return 0;
}
const int kRegistered = register_all();

}  // namespace
