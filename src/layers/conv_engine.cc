#include "layers/conv_engine.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "core/env.h"
#include "layers/conv_algorithm.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"

namespace meshnn::conv {
namespace {

// fp32 and bf16 layers run on our kernels (bf16: Winograd with bf16 GEMM operands, the direct and
// strided-GEMM kernels in f32; docs/precision.md "bf16 on our kernels"); the split modes (bf16x2,
// bf16x3) on oneDNN, whose bf16 conv sums their terms with its `sum` post-op.
bool our_precision(Precision p) { return p == Precision::fp32 || p == Precision::bf16; }

// The algorithm of a 1-D layer: our own kernels for fp32 / bf16 1-D convs (the choice per shape
// lives in conv_algorithm), oneDNN for everything else.
Conv1dAlgo algo_choice(const ConvSpec& spec) {
  const bool ours =
      spec.kind == ConvKind::conv && spec.spatial == 1 && our_precision(spec.precision);
  return ours ? choose_conv1d({spec.c_in, spec.c_out, spec.kernel[0], spec.stride[0],
                               spec.dilation[0], spec.precision})
              : Conv1dAlgo::onednn;
}

// ---- Polyphase ConvTranspose1d ----------------------------------------------------------------
//
// A transposed conv with stride s and kernel K writes full-output row u = i·s + k from input row i
// and tap k. With u = q·s + r and k = m·s + r (phase r ∈ [0, s), m ∈ [0, M), M = ceil(K / s)):
//   full[q·s + r, co] = Σ_m Σ_ci x[q − m, ci] · W[ci, co, m·s + r]
// = an ordinary stride-1 Conv1d over the un-stuffed input with s·C_out output channels ordered
// [phase r][co], kernel M (tap j = M − 1 − m reads x[q + j − (M − 1)]), zero taps where
// m·s + r ≥ K. Channels-last, conv row q's s·C_out values are exactly full rows q·s .. q·s + s − 1,
// so the interleave is free and only the edge crop (pads.l rows in front; the back crop is implied
// by T_out) remains. Each output row is the same formula in every form (one-shot, time shard with
// halo, streaming chunk), so they all take this one path; s× fewer MACs than oneDNN's
// zero-stuffing-free deconv is not the gain — the gain is that the conv runs on our Winograd
// kernel.

// MESHNN_DECONV_ALGO (auto when unset).
enum class DeconvAlgo { automatic, polyphase, onednn };
constexpr EnumNames<DeconvAlgo, 3> kDeconvAlgoNames{"deconvolution algorithm",
                                                    {{DeconvAlgo::automatic, "auto"},
                                                     {DeconvAlgo::polyphase, "polyphase"},
                                                     {DeconvAlgo::onednn, "onednn"}}};
DeconvAlgo deconv_algo_override() {
  return env_choice(EnvSwitch::deconv_algo, kDeconvAlgoNames).value_or(DeconvAlgo::automatic);
}

// The Conv1d geometry of the polyphase form.
Conv1dGeometry polyphase_geometry(const ConvSpec& spec) {
  const int64_t s = spec.stride[0];
  return {spec.c_in, s * spec.c_out, (spec.kernel[0] + s - 1) / s, 1, 1};
}

// The algorithm running the polyphase conv, or onednn to keep oneDNN's deconvolution. Polyphase
// only where the phase conv lands on one of our kernels (Winograd for M ≥ 3 wide layers, a GEMM
// per tap for wide M = 2 ones, the direct kernel for thin ones): measured 1.4-2.9× faster than
// oneDNN's deconv for Winograd and direct (bench/micro/conv_bench.cc deconv /polyphase vs /onednn,
// docs/benchmarks.md "Issue 22 (wave 6): polyphase ConvTranspose1d"). Wide M = 1 layers (kernel ≤
// stride) would run the phase conv on oneDNN's conv, which is not ahead of its deconv, so they
// keep the deconv primitive.
Conv1dAlgo polyphase_choice(const ConvSpec& spec) {
  if (spec.kind != ConvKind::deconv || spec.spatial != 1 || spec.dilation[0] != 1 ||
      !our_precision(spec.precision))
    return Conv1dAlgo::onednn;
  const DeconvAlgo o = deconv_algo_override();
  if (o == DeconvAlgo::onednn) return Conv1dAlgo::onednn;
  const Conv1dAlgo a = choose_conv1d(polyphase_geometry(spec));
  if (o == DeconvAlgo::polyphase) return a;
  return a == Conv1dAlgo::winograd || a == Conv1dAlgo::direct || a == Conv1dAlgo::gemm
             ? a
             : Conv1dAlgo::onednn;
}

// torch ConvTranspose1d weights (C_in, C_out, K) → the phase conv's (s·C_out, C_in, M) weights
// ([r][co] output order, taps reversed, zeros past K). The weights go to a block of the tensor
// storage cache (pages already faulted in, reused after load), each value written once.
Tensor polyphase_weights(const ConvSpec& spec, const float* w) {
  ProfileScope prof("load.polyphase_weights");
  const int64_t s = spec.stride[0], K = spec.kernel[0], ci_n = spec.c_in, co_n = spec.c_out;
  const int64_t M = (K + s - 1) / s;
  Tensor out = Tensor::empty({s * co_n, ci_n, M});
  float* wc = out.data<float>();
  // Per output channel: each input channel's K taps read once (contiguous), written to the s
  // phase rows, each of which advances contiguously with ci.
#pragma omp parallel for schedule(static)
  for (int64_t co = 0; co < co_n; ++co)
    for (int64_t ci = 0; ci < ci_n; ++ci) {
      const float* taps = w + (ci * co_n + co) * K;
      for (int64_t r = 0; r < s; ++r)
        for (int64_t j = 0; j < M; ++j) {
          const int64_t k = (M - 1 - j) * s + r;
          wc[((r * co_n + co) * ci_n + ci) * M + j] = k < K ? taps[k] : 0.f;
        }
    }
  return out;
}

// The phase conv's bias: bias[co] repeated per phase (s·C_out values).
std::vector<float> polyphase_bias(const ConvSpec& spec, const float* b) {
  std::vector<float> bc(static_cast<size_t>(spec.stride[0] * spec.c_out));
  for (int64_t r = 0; r < spec.stride[0]; ++r)
    std::copy(b, b + spec.c_out, bc.begin() + r * spec.c_out);
  return bc;
}

// The conv weights a kernel reads, made (by `make`) only if it reads them; named by the mapped
// weight's origin when it has one (the kernel's key adds its own geometry), else by their values.
// A deconv's polyphase rearrangement depends on its stride and kernel size, so they join its name.
kernels::FilterWeights filter_weights(const MappedWeight& w, const ConvSpec& spec,
                                      const std::function<const float*()>& make) {
  if (!w.has_origin()) return {make, nullptr};
  if (spec.kind != ConvKind::deconv) return {make, [&w] { return w.origin(); }};
  return {make, [&w, &spec] {
            return kernels::FilterKey("polyphase deconv")
                .add(spec.stride[0])
                .add(spec.kernel[0])
                .add(static_cast<int64_t>(w.origin()))
                .value();
          }};
}

}  // namespace

ConvEngine::ConvEngine(const ConvSpec& spec, const MappedWeight& weights, const Tensor& bias)
    : spec_(spec) {
  ProfileScope prof("load.conv_engine");
  MESHNN_CHECK(spec.spatial == 1 || spec.spatial == 2, "conv engine: spatial rank ", spec.spatial);
  MESHNN_CHECK(!(spec.kind == ConvKind::deconv && spec.spatial != 1),
               "conv engine: only 1-D deconvolution is supported");
  if (spec.bias) bias.check_dtype(DType::f32);
  const float* b = spec.bias ? bias.data<float>() : nullptr;
  if (const Conv1dAlgo pa = polyphase_choice(spec); pa != Conv1dAlgo::onednn) {
    const std::vector<float> bc = b ? polyphase_bias(spec, b) : std::vector<float>();
    Tensor wc;  // made only when the kernel reads the weights (a filter cache miss)
    const kernels::FilterWeights fw = filter_weights(weights, spec, [&] {
      wc = polyphase_weights(spec, weights.get().data<float>());
      return wc.data<float>();
    });
    if (auto own = make_conv1d_algorithm(pa, polyphase_geometry(spec), fw, b ? bc.data() : nullptr,
                                         spec.precision)) {
      algo1d_ = std::move(own);
      polyphase_ = true;
      poly_m_ = polyphase_geometry(spec).k;
      return;
    }
  }
  // Our own kernel reads the caller's weights directly (no split copy: it rounds its transformed
  // filters itself in bf16, once, here) and keeps its own copy of them and the bias.
  const kernels::FilterWeights fw =
      filter_weights(weights, spec, [&] { return weights.get().data<float>(); });
  if (auto own = make_conv1d_algorithm(
          algo_choice(spec),
          {spec.c_in, spec.c_out, spec.kernel[0], spec.stride[0], spec.dilation[0]}, fw, b,
          spec.precision)) {
    algo1d_ = std::move(own);
    return;
  }
  if (spec.kind == ConvKind::conv && spec.spatial == 2 && our_precision(spec.precision)) {
    const Conv2dGeometry g{spec.c_in,      spec.c_out,     spec.kernel[0],   spec.kernel[1],
                           spec.stride[0], spec.stride[1], spec.dilation[0], spec.dilation[1]};
    if (auto own = make_conv2d_algorithm(choose_conv2d(g), g, fw, b, spec.precision)) {
      algo2d_ = std::move(own);
      return;
    }
  }
  ProfileScope prof_d("load.onednn_conv");
  onednn_ = std::make_unique<dnnl_glue::ConvPrimitives>(spec, weights.get(), bias);
}

ConvEngine::~ConvEngine() = default;

int64_t ConvEngine::out_extent(int d, int64_t in, const ConvPads& pads) const {
  return dnnl_glue::conv_out_extent(spec_, d, in, pads);
}

// src: (B, T, C_in) → dst: (B, T_out, C_out) = full deconv rows pads.l .. pads.l + T_out − 1.
void ConvEngine::run_polyphase(const Tensor& src, Tensor& dst, const ConvPads& pads,
                               bool accumulate) {
  ProfileScope prof("conv_transpose1d.polyphase");
  const int64_t B = src.dim(0), T = src.dim(1), T_out = dst.dim(1);
  const int64_t s = spec_.stride[0], M = poly_m_, ci_n = spec_.c_in, co_n = spec_.c_out;
  const int64_t l = pads.l[0];
  MESHNN_CHECK(l >= 0, "polyphase conv_transpose1d: negative front crop ", l);
  const int64_t q0 = l / s, q1 = (l + T_out - 1) / s, Q = q1 - q0 + 1;
  const int64_t off = l - q0 * s;  // rows of phase row q0 before the first output row
  // Phase row q0 + t reads x[q0 + t + j − (M − 1)]: a front pad of M − 1 − q0 rows, or (when that
  // is negative) the input started q0 − (M − 1) rows later.
  int64_t pad = M - 1 - q0, skip = 0;
  if (pad < 0) {
    skip = -pad;
    pad = 0;
  }
  MESHNN_CHECK(skip < T, "polyphase conv_transpose1d: crop past the input");
  const bool in_place = off == 0 && Q * s == T_out;
  // A batch (stream pushes stacked by StreamGroup) goes to the Winograd and GEMM kernels in one
  // call, which read the weights once for all its rows (BigVGAN's first upsampler: 38 MB); the
  // skipped rows become a negative pad (rows read from `skip` on, zeros past T as before).
  const Conv1dAlgo kind = algo1d_->kind();
  if (B > 1 && (kind == Conv1dAlgo::winograd || kind == Conv1dAlgo::gemm)) {
    if (in_place) {
      algo1d_->run(src.data<float>(), B, T, pad - skip, dst.data<float>(), Q, accumulate);
      return;
    }
    Tensor phases = Tensor::empty({B, Q * s, co_n});
    algo1d_->run(src.data<float>(), B, T, pad - skip, phases.data<float>(), Q, false);
    for (int64_t b = 0; b < B; ++b) {
      float* y = dst.data<float>() + b * T_out * co_n;
      const float* z = phases.data<float>() + (b * Q * s + off) * co_n;
      const int64_t n = T_out * co_n;
      if (accumulate)
        for (int64_t i = 0; i < n; ++i) y[i] += z[i];
      else
        std::memcpy(y, z, static_cast<size_t>(n) * sizeof(float));
    }
    return;
  }
  // Phase rows when the crop does not fall on a phase boundary: from the tensor storage cache, so
  // the first call neither zero-fills nor faults in a buffer per layer (and none is held between
  // calls).
  Tensor phases = in_place ? Tensor() : Tensor::empty({Q * s, co_n});
  for (int64_t b = 0; b < B; ++b) {
    const float* x = src.data<float>() + (b * T + skip) * ci_n;
    float* y = dst.data<float>() + b * T_out * co_n;
    if (in_place) {
      algo1d_->run(x, 1, T - skip, pad, y, Q, accumulate);
      continue;
    }
    algo1d_->run(x, 1, T - skip, pad, phases.data<float>(), Q, false);
    const float* z = phases.data<float>() + off * co_n;
    const int64_t n = T_out * co_n;
    if (accumulate)
      for (int64_t i = 0; i < n; ++i) y[i] += z[i];
    else
      std::memcpy(y, z, static_cast<size_t>(n) * sizeof(float));
  }
}

void ConvEngine::run(const Tensor& src, Tensor& dst, const ConvPads& pads, bool accumulate) {
  if (polyphase_)
    run_polyphase(src, dst, pads, accumulate);
  else if (algo1d_)
    algo1d_->run(src.data<float>(), src.dim(0), src.dim(1), pads.l[0], dst.data<float>(),
                 dst.dim(1), accumulate);
  else if (algo2d_)
    algo2d_->run(src.data<float>(), src.dim(0), src.dim(1), src.dim(2), pads.l[0], pads.l[1],
                 dst.data<float>(), dst.dim(1), dst.dim(2), accumulate);
  else
    onednn_->run(src, dst, pads, accumulate);
}

void ConvEngine::prepare(const Shape& src_shape, const ConvPads& pads) {
  (void)impl_info(src_shape, pads);
}

std::string ConvEngine::impl_info(const Shape& src_shape, const ConvPads& pads) {
  if (polyphase_) return "polyphase:" + algo1d_->name();
  if (algo1d_) return algo1d_->name();
  if (algo2d_) return algo2d_->name();
  return onednn_->impl_info(src_shape, pads);
}

std::unique_ptr<ConvEngine> ConvEngine::fork() const {
  std::unique_ptr<ConvEngine> e(new ConvEngine());
  e->spec_ = spec_;
  e->algo1d_ = algo1d_;  // shared by reference: no copy, no repacking
  e->polyphase_ = polyphase_;
  e->poly_m_ = poly_m_;
  e->algo2d_ = algo2d_;
  if (onednn_) e->onednn_ = onednn_->fork();
  return e;
}

size_t ConvEngine::plan_count() const { return onednn_ ? onednn_->plan_count() : 0; }

const void* ConvEngine::weights_identity() const {
  if (algo1d_) return algo1d_.get();
  if (algo2d_) return algo2d_.get();
  return onednn_->weights_identity();
}

}  // namespace meshnn::conv
