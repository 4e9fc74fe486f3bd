// bf16 layers on our kernels (docs/precision.md "bf16 on our kernels"): with the default algorithm
// choice a bf16 Conv1d / ConvTranspose1d / Conv2d runs Winograd with bf16 GEMM operands where the
// choice is Winograd (packed vdpbf16ps on AVX512-BF16, exact emulation elsewhere), and the direct
// and strided-GEMM kernels in f32 where those are chosen (no bf16 form: f32 is faster than oneDNN's
// bf16 conv with its reorders, and more accurate). Each path is checked against a float64 loop:
// Winograd within the derived bf16 bound 1.5 · 2.2e-3 · κ(F(3,3)) = 8.1e-3 (and above the f32
// level, so the operands really were rounded), the f32 kernels at the f32 level (1e-5). None of
// them creates a oneDNN primitive.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/packed_gemm.h"
#include "kernels/winograd1d.h"
#include "layers/conv_engine.h"
#include "meshnn/core/precision.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using conv::ConvEngine;
using conv::ConvKind;
using conv::ConvPads;
using conv::ConvSpec;

constexpr double kWinogradBf16Bound = 8.1e-3;  // 1.5 · 2.2e-3 · κ(F(3,3)) = 2.45
constexpr double kF32Bound = 1e-5;
constexpr double kRoundedFloor = 2e-4;  // bf16 operand rounding is ~1e-3 or more

// x (1, T, Ci), w (Co, Ci, K): y[t] = b + Σ_j w_j · x[t·s + j·d − pad], T_out rows, float64.
std::vector<double> conv1d_f64(const Tensor& x, const Tensor& w, const Tensor& b, int64_t s,
                               int64_t d, int64_t pad, int64_t T_out) {
  const int64_t T = x.dim(1), Ci = x.dim(2), Co = w.dim(0), K = w.dim(2);
  std::vector<double> y(static_cast<size_t>(T_out * Co));
  for (int64_t t = 0; t < T_out; ++t)
    for (int64_t o = 0; o < Co; ++o) {
      double acc = b.data<float>()[o];
      for (int64_t j = 0; j < K; ++j) {
        const int64_t r = t * s + j * d - pad;
        if (r < 0 || r >= T) continue;
        for (int64_t i = 0; i < Ci; ++i)
          acc += double(x.data<float>()[r * Ci + i]) * w.data<float>()[(o * Ci + i) * K + j];
      }
      y[t * Co + o] = acc;
    }
  return y;
}

// x (1, T, Ci), w (Ci, Co, K), stride s, crop P each side: the transposed conv in float64.
std::vector<double> deconv_f64(const Tensor& x, const Tensor& w, const Tensor& b, int64_t s,
                               int64_t P, int64_t T_out) {
  const int64_t T = x.dim(1), Ci = x.dim(2), Co = w.dim(1), K = w.dim(2);
  std::vector<double> y(static_cast<size_t>(T_out * Co));
  for (int64_t t = 0; t < T_out; ++t)
    for (int64_t o = 0; o < Co; ++o) y[t * Co + o] = b.data<float>()[o];
  for (int64_t t = 0; t < T; ++t)
    for (int64_t j = 0; j < K; ++j) {
      const int64_t u = t * s + j - P;
      if (u < 0 || u >= T_out) continue;
      for (int64_t i = 0; i < Ci; ++i)
        for (int64_t o = 0; o < Co; ++o)
          y[u * Co + o] +=
              double(x.data<float>()[t * Ci + i]) * w.data<float>()[(i * Co + o) * K + j];
    }
  return y;
}

struct Case1d {
  const char* what;
  ConvKind kind;
  int64_t ci, co, k, s, d, T;
  std::string impl;  // what impl_info must contain
  bool winograd;     // bf16 operands (else f32 level)
};

void check_case(const Case1d& c) {
  SCOPED_TRACE(c.what);
  ConvSpec spec;
  spec.kind = c.kind;
  spec.c_in = c.ci;
  spec.c_out = c.co;
  spec.kernel[0] = c.k;
  spec.stride[0] = c.s;
  spec.dilation[0] = c.d;
  spec.precision = Precision::bf16;
  const bool de = c.kind == ConvKind::deconv;
  const float scale = 1.f / std::sqrt(float(c.ci * c.k) / (de ? c.s : 1));
  const Tensor w =
      test::random_normal(de ? Shape{c.ci, c.co, c.k} : Shape{c.co, c.ci, c.k}, 41, scale);
  const Tensor b = test::random_normal({c.co}, 42, 0.1f);
  const Tensor x = test::random_uniform({1, c.T, c.ci}, 43);
  ConvEngine e(spec, w, b);
  ConvPads pads;
  pads.l[0] = pads.r[0] = de ? (c.k - c.s) / 2 : (c.k - 1) * c.d / 2;
  const int64_t T_out = e.out_extent(0, c.T, pads);
  const std::string impl = e.impl_info({1, c.T, c.ci}, pads);
  EXPECT_NE(impl.find(c.impl), std::string::npos) << impl;
  Tensor y({1, T_out, c.co});
  e.run(x, y, pads, false);
  const auto ref = de ? deconv_f64(x, w, b, c.s, pads.l[0], T_out)
                      : conv1d_f64(x, w, b, c.s, c.d, pads.l[0], T_out);
  const double err = test::rel_l2_to_f64(y, ref);
  std::printf("bf16 %-44s %-44s rel L2 %.2e\n", c.what, impl.c_str(), err);
  if (c.winograd) {
    EXPECT_LT(err, kWinogradBf16Bound);
    EXPECT_GT(err, kRoundedFloor);
  } else {
    EXPECT_LT(err, kF32Bound);
  }
  EXPECT_EQ(e.plan_count(), 0u) << "a oneDNN primitive was created";
}

// The Winograd GEMM label this CPU runs bf16 on.
const char* bf16_gemm() {
  return kernels::packed_gemm_available(kernels::GemmType::bf16) ? "packed-bf16" : "sgemm-bf16emu";
}

TEST(ConvBf16Kernels, EveryPathAgainstFloat64) {
  if (!kernels::winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  const std::string wg = std::string("winograd:F(3,3):") + bf16_gemm();
  const Case1d cases[] = {
      {"AMP conv 384->384 k7 d3", ConvKind::conv, 384, 384, 7, 1, 3, 300, wg, true},
      {"AMP conv 96->96 k3 d5", ConvKind::conv, 96, 96, 3, 1, 5, 257, wg, true},
      {"thin 32->32 k7 (direct)", ConvKind::conv, 32, 32, 7, 1, 1, 301, "direct:avx2:f32-for-bf16",
       false},
      {"strided 256->512 k4 s2 (gemm)", ConvKind::conv, 256, 512, 4, 2, 1, 200,
       "gemm:s2:sgemm:f32-for-bf16", false},
      {"upsampler 512->256 k4 s2 (polyphase gemm)", ConvKind::deconv, 512, 256, 4, 2, 1, 100,
       "polyphase:gemm:s1:sgemm:f32-for-bf16", false},
      {"upsampler 256->128 k12 s4 (polyphase winograd)", ConvKind::deconv, 256, 128, 12, 4, 1, 60,
       "polyphase:" + wg, true},
  };
  for (const Case1d& c : cases) check_case(c);
}

TEST(ConvBf16Kernels, Conv2dRunsBf16Winograd) {
  if (!kernels::winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  ConvSpec spec;
  spec.spatial = 2;
  spec.c_in = spec.c_out = 64;
  spec.kernel = {3, 3};
  spec.precision = Precision::bf16;
  const Tensor w = test::random_normal({64, 64, 3, 3}, 51, 1.f / 24.f);
  const Tensor b = test::random_normal({64}, 52, 0.1f);
  const Tensor x = test::random_uniform({1, 12, 10, 64}, 53);
  ConvEngine e(spec, w, b);
  ConvPads pads;
  pads.l = {2, 1};
  pads.r = {0, 1};
  const std::string impl = e.impl_info({1, 12, 10, 64}, pads);
  EXPECT_NE(impl.find(std::string("winograd:F(2x2,3x3):") + bf16_gemm()), std::string::npos)
      << impl;
  Tensor y({1, 12, 10, 64});
  e.run(x, y, pads, false);
  // float64 reference, causal in height (2 rows on top), 1 column each side.
  std::vector<double> ref(12 * 10 * 64);
  for (int64_t i = 0; i < 12; ++i)
    for (int64_t j = 0; j < 10; ++j)
      for (int64_t o = 0; o < 64; ++o) {
        double acc = b.data<float>()[o];
        for (int64_t a = 0; a < 3; ++a)
          for (int64_t c = 0; c < 3; ++c) {
            const int64_t r = i + a - 2, q = j + c - 1;
            if (r < 0 || r >= 12 || q < 0 || q >= 10) continue;
            for (int64_t ci = 0; ci < 64; ++ci)
              acc += double(x.data<float>()[(r * 10 + q) * 64 + ci]) *
                     w.data<float>()[((o * 64 + ci) * 3 + a) * 3 + c];
          }
        ref[(i * 10 + j) * 64 + o] = acc;
      }
  const double err = test::rel_l2_to_f64(y, ref);
  EXPECT_LT(err, kWinogradBf16Bound);
  EXPECT_GT(err, kRoundedFloor);
  EXPECT_EQ(e.plan_count(), 0u);
}

// The block scratch of a Winograd layer is grown when the layer is built (at load): its first
// call on a long input neither reallocates nor zero-fills it (docs/benchmarks.md, first call).
TEST(ConvBf16Kernels, WinogradScratchReadyAtLoad) {
  if (!kernels::winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  for (const Precision p : {Precision::fp32, Precision::bf16}) {
    SCOPED_TRACE(precision_name(p));
    ConvSpec spec;
    spec.c_in = spec.c_out = 448;  // wider than every layer built before in this process
    spec.kernel[0] = 7;
    spec.dilation[0] = 3;
    spec.precision = p;
    const Tensor w = test::random_normal({448, 448, 7}, 61 + static_cast<int>(p), 0.02f);
    const Tensor b = test::random_normal({448}, 62, 0.1f);
    ConvEngine e(spec, w, b);
    const kernels::WinogradScratch& s = kernels::winograd_scratch();
    const float* f32 = s.f32.data();
    const uint16_t* b16 = s.bf16.data();
    ASSERT_GT(s.f32.size(), 0u);
    const Tensor x = test::random_uniform({1, 4000, 448}, 63);
    Tensor y({1, 4000, 448});
    ConvPads pads;
    pads.l[0] = pads.r[0] = 9;
    e.run(x, y, pads, false);
    EXPECT_EQ(s.f32.data(), f32) << "the first call grew the f32 scratch";
    EXPECT_EQ(s.bf16.data(), b16) << "the first call grew the bf16 scratch";
  }
}

}  // namespace
}  // namespace meshnn
