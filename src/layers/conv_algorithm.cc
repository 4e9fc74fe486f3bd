#include "layers/conv_algorithm.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/enum_names.h"
#include "core/env.h"
#include "kernels/conv1d_direct.h"
#include "kernels/strided_gemm_conv1d.h"
#include "kernels/winograd1d.h"
#include "kernels/winograd2d.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"

namespace meshnn::conv {

namespace {

// Our direct kernel up to this many channels (max of C_in, C_out): there it runs at 120-185
// GFLOP/s on 2 threads where oneDNN 2.6's AVX2 kernels reach 33-156; from C = 384 oneDNN's gemm
// path is as fast (bench/micro/conv_bench.cc, docs/benchmarks.md).
constexpr int64_t kDirectMaxChannels = 192;

// Winograd when both channel counts reach this, and the layer does not widen more than 4×
// (conv_pre-like 64/128 → 512/1536 layers on few frames stay on oneDNN). Measured with
// bench/micro/conv_bench.cc /direct /winograd /onednn (docs/benchmarks.md): Winograd 1.3-2× ahead
// of the best direct algorithm from C = 48 up, behind at C = 32 and below (the transforms, O(C) per
// row, and the thin GEMMs cost more than the multiplies saved), behind on the widening layers.
constexpr int64_t kWinogradMinChannels = 48;
constexpr int64_t kWinogradMaxWidening = 4;

// The label suffix of an f32 kernel running a layer built at another precision (benchmarks and
// impl_info show that a bf16 layer ran in f32).
std::string f32_label(Precision p) {
  return p == Precision::fp32 ? "" : std::string(":f32-for-") + precision_name(p);
}

class DirectAlgorithm final : public Conv1dAlgorithm {
 public:
  DirectAlgorithm(const Conv1dGeometry& g, const float* w, const float* b, Precision p)
      : w_(kernels::pack_direct_conv1d(w, b, g.c_out, g.c_in, g.k, g.stride, g.dilation)),
        f32_for_(p) {}
  Conv1dAlgo kind() const override { return Conv1dAlgo::direct; }
  std::string name() const override { return "direct:avx2" + f32_label(f32_for_); }
  void run(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
           bool accumulate) const override {
    ProfileScope prof("conv1d.direct");
    for (int64_t b = 0; b < B; ++b)
      kernels::direct_conv1d(w_, x + b * T * w_.c_in, T, pad_l, y + b * T_out * w_.c_out, T_out,
                             accumulate);
  }

 private:
  kernels::DirectConv1dWeights w_;
  Precision f32_for_;  // the layer's precision (the kernel runs f32 for every mode)
};

class WinogradAlgorithm final : public Conv1dAlgorithm {
 public:
  WinogradAlgorithm(const Conv1dGeometry& g, const kernels::FilterWeights& w, const float* b,
                    kernels::WinogradPrecision p)
      : wg_(w, b, g.c_out, g.c_in, g.k, g.dilation, kernels::default_winograd_tile(g.k, p), p) {}
  Conv1dAlgo kind() const override { return Conv1dAlgo::winograd; }
  std::string name() const override {
    const kernels::WinogradTile t = wg_.tile();
    return "winograd:F(" + std::to_string(t.m) + "," + std::to_string(t.r) +
           "):" + wg_.gemm_label();
  }
  void run(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
           bool accumulate) const override {
    ProfileScope prof("conv1d.winograd");
    wg_.run(x, B, T, pad_l, y, T_out, accumulate);  // short rows stacked: filters read once
  }

 private:
  kernels::Winograd1d wg_;
};

// Strided layers (stride ≥ 2) and 2-tap stride-1 ones (the polyphase phase convs of the k 2s
// upsamplers), dilation 1, too wide for the direct kernel run as GEMMs over space-to-depth rows:
// the MiniMax-H3 encoder's k 2s downsamplers (128-1024 channels) went from oneDNN's 37-94 GFLOP/s
// to 74-105 in steady state (docs/benchmarks.md); where the direct kernel fits it stays ahead
// (64 → 128, k 4 s 2: 118 vs 103 GFLOP/s).
class StridedGemmAlgorithm final : public Conv1dAlgorithm {
 public:
  StridedGemmAlgorithm(const Conv1dGeometry& g, const kernels::FilterWeights& w, const float* b,
                       Precision p)
      : w_(kernels::pack_strided_gemm_conv1d(w, b, g.c_out, g.c_in, g.k, g.stride)), f32_for_(p) {}
  Conv1dAlgo kind() const override { return Conv1dAlgo::gemm; }
  std::string name() const override {
    return "gemm:s" + std::to_string(w_.stride) + ":sgemm" + f32_label(f32_for_);
  }
  void run(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
           bool accumulate) const override {
    ProfileScope prof("conv1d.gemm");
    kernels::strided_gemm_conv1d(w_, x, B, T, pad_l, y, T_out, accumulate);  // B: weights read once
  }

 private:
  kernels::StridedGemmWeights w_;
  Precision f32_for_;
};

// Winograd F(2×2, 3×3) for Conv2d when both channel counts reach this (measured against oneDNN
// with bench/micro/conv_bench.cc conv2d cases, docs/benchmarks.md).
constexpr int64_t kWinograd2dMinChannels = 64;

class Winograd2dAlgorithm final : public Conv2dAlgorithm {
 public:
  Winograd2dAlgorithm(const Conv2dGeometry& g, const kernels::FilterWeights& w, const float* b,
                      kernels::WinogradPrecision p)
      : wg_(w, b, g.c_out, g.c_in, p) {}
  std::string name() const override {
    return std::string("winograd:F(2x2,3x3):") + wg_.gemm_label();
  }
  void run(const float* x, int64_t B, int64_t H, int64_t W, int64_t pad_h, int64_t pad_w, float* y,
           int64_t H_out, int64_t W_out, bool accumulate) const override {
    ProfileScope prof("conv2d.winograd");
    for (int64_t b = 0; b < B; ++b)
      wg_.run(x + b * H * W * wg_.c_in(), H, W, pad_h, pad_w, y + b * H_out * W_out * wg_.c_out(),
              H_out, W_out, accumulate);
  }

 private:
  kernels::Winograd2d wg_;
};

bool winograd2d_fits(const Conv2dGeometry& g) {
  return g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 &&
         kernels::winograd1d_available();
}

// Our direct kernel is AVX2 code. On an AVX-512 CPU oneDNN's brgconv runs the 1-tap layers of
// ≥ 64 channels and the strided ones about 2× faster (the MiniMax-H3 encoder's k1 64 / 128 and
// k4 s2 64 → 128 layers: 75-90 vs 145-175 GFLOP/s per thread, docs/benchmarks.md "Issue 34 (wave
// 16)": the strided GEMM 130-150), so there those go to oneDNN; thinner ones (not measured) and
// k > 1 stride-1 layers stay (oneDNN's primitive for the thin dilated decoder layers costs time
// linear in the input width, docs/benchmarks.md).
constexpr int64_t kDirectMinChannelsAvx512 = 64;
bool direct_loses_to_avx512(const Conv1dGeometry& g) {
  if (!cpu_features().avx512f || g.precision != Precision::fp32) return false;
  return (g.stride >= 2 || g.k == 1) && g.dilation == 1 &&
         std::min(g.c_in, g.c_out) >= kDirectMinChannelsAvx512;
}
// Thin enough for the direct kernel (a wider strided layer goes to the strided GEMM).
bool direct_size(const Conv1dGeometry& g) {
  return std::max(g.c_in, g.c_out) <= kDirectMaxChannels && kernels::direct_conv1d_available();
}
bool direct_fits(const Conv1dGeometry& g) { return direct_size(g) && !direct_loses_to_avx512(g); }
bool gemm_fits(const Conv1dGeometry& g) { return g.dilation == 1 && (g.stride >= 2 || g.k == 2); }
bool winograd_fits(const Conv1dGeometry& g) {
  return g.stride == 1 && g.k >= 3 && kernels::winograd1d_available();  // K < 3: nothing to save
}

}  // namespace

namespace {
constexpr EnumNames<Conv1dAlgo, 6> kConvAlgoNames{"convolution algorithm",
                                                  {{Conv1dAlgo::automatic, "auto"},
                                                   {Conv1dAlgo::direct, "direct"},
                                                   {Conv1dAlgo::winograd, "winograd"},
                                                   {Conv1dAlgo::gemm, "gemm"},
                                                   {Conv1dAlgo::fft, "fft"},
                                                   {Conv1dAlgo::onednn, "onednn"}}};
}  // namespace

Conv1dAlgo conv_algo_override() {
  if (const auto a = env_choice(EnvSwitch::conv_algo, kConvAlgoNames)) return *a;
  // The switch this one replaced: MESHNN_CONV_DIRECT=0 kept every conv on oneDNN.
  if (env_value(EnvSwitch::conv_direct) == "0") return Conv1dAlgo::onednn;
  return Conv1dAlgo::automatic;
}

const char* to_string(Conv1dAlgo a) { return kConvAlgoNames.name(a); }

Conv1dAlgo choose_conv1d(const Conv1dGeometry& g) {
  const Conv1dAlgo o = conv_algo_override();
  if (o == Conv1dAlgo::onednn) return Conv1dAlgo::onednn;
  if (gemm_fits(g) && (o == Conv1dAlgo::gemm || (o == Conv1dAlgo::automatic && !direct_size(g))))
    return Conv1dAlgo::gemm;
  // fft is not built yet: it resolves like winograd (the fast-algorithm request).
  const bool fast =
      o == Conv1dAlgo::winograd || o == Conv1dAlgo::fft ||
      (o == Conv1dAlgo::automatic && std::min(g.c_in, g.c_out) >= kWinogradMinChannels &&
       g.c_out <= kWinogradMaxWidening * g.c_in);
  if (fast && winograd_fits(g)) return Conv1dAlgo::winograd;
  return direct_fits(g) ? Conv1dAlgo::direct : Conv1dAlgo::onednn;
}

Conv1dAlgo choose_conv2d(const Conv2dGeometry& g) {
  const Conv1dAlgo o = conv_algo_override();
  const bool fast =
      o == Conv1dAlgo::winograd || o == Conv1dAlgo::fft ||
      (o == Conv1dAlgo::automatic && std::min(g.c_in, g.c_out) >= kWinograd2dMinChannels);
  return fast && winograd2d_fits(g) ? Conv1dAlgo::winograd : Conv1dAlgo::onednn;
}

namespace {
// The Winograd arithmetic of a layer precision; false for the split modes (oneDNN runs them).
bool winograd_precision(Precision p, kernels::WinogradPrecision& out) {
  if (p == Precision::fp32)
    out = kernels::WinogradPrecision::f32;
  else if (p == Precision::bf16)
    out = kernels::WinogradPrecision::bf16;
  else
    return false;
  return true;
}
}  // namespace

std::unique_ptr<Conv2dAlgorithm> make_conv2d_algorithm(Conv1dAlgo algo, const Conv2dGeometry& g,
                                                       const kernels::FilterWeights& weights,
                                                       const float* bias, Precision precision) {
  kernels::WinogradPrecision wp;
  if ((algo != Conv1dAlgo::winograd && algo != Conv1dAlgo::fft) || !winograd2d_fits(g) ||
      !winograd_precision(precision, wp))
    return nullptr;
  return std::make_unique<Winograd2dAlgorithm>(g, weights, bias, wp);
}

std::unique_ptr<Conv1dAlgorithm> make_conv1d_algorithm(Conv1dAlgo algo, const Conv1dGeometry& g,
                                                       const kernels::FilterWeights& weights,
                                                       const float* bias, Precision precision) {
  kernels::WinogradPrecision wp;
  if (!winograd_precision(precision, wp)) return nullptr;
  switch (algo) {
    case Conv1dAlgo::direct:
      // f32 only. A bf16 layer runs it in f32 (docs/precision.md "bf16 on our kernels"): the thin
      // layers it takes are bound by their transforms of C ≤ 192 channels, not by the multiplies,
      // and oneDNN's bf16 conv there costs two reorders per call and more error.
      if (!kernels::direct_conv1d_available()) return nullptr;
      return std::make_unique<DirectAlgorithm>(g, weights.values(), bias, precision);
    case Conv1dAlgo::gemm:
      // f32 only, bf16 layers included (same reason; these are memory-bound strided GEMMs).
      if (!gemm_fits(g)) return nullptr;
      return std::make_unique<StridedGemmAlgorithm>(g, weights, bias, precision);
    case Conv1dAlgo::winograd:
    case Conv1dAlgo::fft:
      if (!winograd_fits(g)) return nullptr;
      return std::make_unique<WinogradAlgorithm>(g, weights, bias, wp);
    default:
      return nullptr;
  }
}

}  // namespace meshnn::conv
