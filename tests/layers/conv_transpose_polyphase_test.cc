// Polyphase ConvTranspose1d (conv_engine.cc: one stride·C_out Conv1d on the un-stuffed input, free
// channels-last interleave, edge crop) against the float64 direct definition, over kernels that
// are and are not multiples of the stride (K < s too), paddings, output paddings and the model
// shapes (LTX-2.3 vocoder 5,2,2,2,2,2 with k 11 / 4, BWE k 12 s 6, BigVGAN v2 2s kernels); on
// our kernels (Winograd, direct, the per-tap GEMM for 2-tap phases) and with the oneDNN
// deconvolution fallback forced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "layers/conv_ref.h"
#include "meshnn/core/error.h"
#include "meshnn/layers/conv.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::close_rel_l2;
using test::random_normal;
using test::random_uniform;

constexpr double kTolF32 = 1e-5;  // f32 rounding of depth-(Ci·ceil(K/s)) dot products

struct PT {
  int64_t b, t, ci, co, k, s;
  std::optional<int64_t> padding;
  int64_t op;
};

// Builds the layer under MESHNN_DECONV_ALGO=deconv and MESHNN_CONV_ALGO=conv (read at load).
ConvTranspose1d make_layer(const PT& c, const char* deconv, const char* conv, uint64_t seed) {
  ConvTranspose1dConfig cfg;
  cfg.in_channels = c.ci;
  cfg.out_channels = c.co;
  cfg.kernel_size = c.k;
  cfg.stride = c.s;
  cfg.padding = c.padding;
  cfg.output_padding = c.op;
  ConvTranspose1d up(cfg, "ups");
  setenv("MESHNN_DECONV_ALGO", deconv, 1);
  setenv("MESHNN_CONV_ALGO", conv, 1);
  up.set_weights(random_normal({c.ci, c.co, c.k}, seed, 0.2f), random_normal({c.co}, seed + 1));
  unsetenv("MESHNN_DECONV_ALGO");
  unsetenv("MESHNN_CONV_ALGO");
  return up;
}

std::vector<double> reference(const PT& c, const Tensor& x, const Tensor& w, const Tensor& b,
                              int64_t P, int64_t op, int64_t* To) {
  return test::conv_transpose1d_ref(test::to_f64(x), x.dim(0), x.dim(1), c.ci, test::to_f64(w),
                                    c.co, c.k, test::to_f64(b), c.s, 1, P, op, To);
}

class PolyphaseDeconv : public ::testing::TestWithParam<PT> {};

TEST_P(PolyphaseDeconv, MatchesFloat64InEveryForm) {
  const PT c = GetParam();
  const uint64_t seed = 100 + static_cast<uint64_t>(c.k * 31 + c.s * 7 + c.ci);
  const Tensor w = random_normal({c.ci, c.co, c.k}, seed, 0.2f);
  const Tensor b = random_normal({c.co}, seed + 1);
  const int64_t P = c.padding.value_or((c.k - c.s) / 2);
  for (const char* conv : {"winograd", "direct", "gemm"}) {
    ConvTranspose1d up = make_layer(c, "polyphase", conv, seed);
    const std::string impl = up.impl_info({c.b, c.t, c.ci});
    const bool winograd_fits = (c.k + c.s - 1) / c.s >= 3;
    if (std::string(conv) == "winograd" && winograd_fits) {
      EXPECT_EQ(impl.rfind("polyphase:winograd", 0), 0u) << impl;
    } else if (std::string(conv) == "direct" && std::max(c.ci, c.s * c.co) <= 192) {
      EXPECT_EQ(impl.rfind("polyphase:direct", 0), 0u) << impl;
    } else if (std::string(conv) == "gemm" && (c.k + c.s - 1) / c.s == 2) {
      EXPECT_EQ(impl.rfind("polyphase:gemm", 0), 0u) << impl;
    }
    const Tensor x = random_uniform({c.b, c.t, c.ci}, seed + 2);
    int64_t To = 0;
    // One-shot (crop p | p − op).
    const auto ref = reference(c, x, w, b, P, c.op, &To);
    const Tensor y = up.forward(x);
    ASSERT_EQ(y.shape(), Shape({c.b, To, c.co})) << impl;
    EXPECT_TRUE(close_rel_l2(y, test::from_f64(ref, {c.b, To, c.co}), kTolF32)) << impl;
    // No crop (the time-shard / streaming form).
    int64_t Tf = 0;
    const auto full = reference(c, x, w, b, 0, 0, &Tf);
    const Tensor yf = up.forward_padded(x);
    EXPECT_TRUE(close_rel_l2(yf, test::from_f64(full, {c.b, Tf, c.co}), kTolF32)) << impl;
    // Accumulate into a random output.
    Tensor acc = random_uniform({c.b, To, c.co}, seed + 3);
    std::vector<double> want = test::to_f64(acc);
    for (size_t i = 0; i < want.size(); ++i) want[i] += ref[i];
    up.forward_into(x, acc, true);
    EXPECT_TRUE(close_rel_l2(acc, test::from_f64(want, {c.b, To, c.co}), kTolF32)) << impl;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PolyphaseDeconv,
    ::testing::Values(PT{1, 37, 48, 24, 11, 5, std::nullopt, 0},  // LTX ups.0 (k 11, s 5)
                      PT{2, 29, 24, 12, 4, 2, std::nullopt, 0},   // LTX ups.1..5 (k 4, s 2)
                      PT{1, 23, 48, 24, 12, 6, std::nullopt, 0},  // BWE ups.0 (k 12, s 6)
                      PT{1, 31, 64, 32, 8, 4, std::nullopt, 0},   // BigVGAN v2 (k 2s, s 4)
                      PT{1, 19, 16, 8, 16, 8, std::nullopt, 0},   // k 2s, s 8
                      PT{1, 21, 16, 8, 3, 5, 1, 0},               // K < s
                      PT{1, 17, 12, 6, 7, 3, 2, 1},               // K % s ≠ 0, output_padding
                      PT{2, 15, 12, 10, 13, 4, 5, 3},             // big crop (q0 > M − 1)
                      PT{1, 25, 8, 8, 9, 3, 0, 2},                // no padding, op 2
                      PT{1, 9, 6, 5, 5, 1, 2, 0},                 // stride 1
                      PT{1, 1, 8, 4, 11, 5, std::nullopt, 0},     // one frame
                      // Batches (stream pushes stacked): one kernel call for all rows.
                      PT{3, 31, 64, 32, 8, 4, std::nullopt, 0},  // BigVGAN v2 k 2s, s 4
                      PT{3, 15, 12, 10, 13, 4, 5, 3},            // big crop (a negative pad)
                      PT{4, 15, 64, 64, 13, 4, 5, 3},  // big crop, 256 phase channels (stacked)
                      PT{3, 17, 12, 6, 7, 3, 2, 1}));  // output_padding (through the scratch)

TEST(PolyphaseDeconv, OnednnFallbackForcedAndDefault) {
  const PT c{1, 40, 64, 32, 11, 5, std::nullopt, 0};
  ConvTranspose1d onednn = make_layer(c, "onednn", "auto", 5);
  EXPECT_EQ(onednn.impl_info({1, 40, 64}).rfind("polyphase:", 0), std::string::npos);
  ConvTranspose1d poly = make_layer(c, "polyphase", "winograd", 5);
  const Tensor x = random_uniform({1, 40, 64}, 6);
  EXPECT_TRUE(close_rel_l2(poly.forward(x), onednn.forward(x), kTolF32));
  setenv("MESHNN_DECONV_ALGO", "bogus", 1);
  ConvTranspose1dConfig cfg;
  cfg.in_channels = 4;
  cfg.out_channels = 4;
  cfg.kernel_size = 4;
  cfg.stride = 2;
  ConvTranspose1d bad(cfg, "bad");
  EXPECT_THROW(bad.set_weights(random_normal({4, 4, 4}, 1), random_normal({4}, 2)),
               InvalidArgument);
  unsetenv("MESHNN_DECONV_ALGO");
}

}  // namespace
}  // namespace meshnn
