// Strided Conv1d as GEMMs over space-to-depth rows (kernels/strided_gemm_conv1d, chosen in
// layers/conv_algorithm) against the float64 direct definition: the MiniMax-H3 encoder's k 2s
// downsamplers, kernels that are not multiples of the stride (K < s too), inputs so short that
// every output row is an edge row, no bias, 2 taps at stride 1 (the polyphase phase convs);
// one-shot, padded (the time-shard form) and accumulate; and the choice: default for strided layers
// too wide for the direct kernel, forced by MESHNN_CONV_ALGO=gemm, never for dilated ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/strided_gemm_conv1d.h"
#include "layers/conv_algorithm.h"
#include "layers/conv_ref.h"
#include "meshnn/core/cpu.h"
#include "meshnn/layers/conv.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::close_rel_l2;
using test::random_normal;
using test::random_uniform;

constexpr double kTolF32 = 1e-5;  // f32 rounding of depth-(C_in·K) dot products

struct SG {
  int64_t b, t, ci, co, k, s, pad;
  bool bias;
};

// The layer built under MESHNN_CONV_ALGO=algo (read at construction).
Conv1d make_layer(const SG& c, const char* algo, const Tensor& w, const Tensor& b) {
  Conv1dConfig cfg;
  cfg.in_channels = c.ci;
  cfg.out_channels = c.co;
  cfg.kernel_size = c.k;
  cfg.stride = c.s;
  cfg.padding = c.pad;
  cfg.bias = c.bias;
  Conv1d conv(cfg, "down");
  setenv("MESHNN_CONV_ALGO", algo, 1);
  conv.set_weights(w, b);
  unsetenv("MESHNN_CONV_ALGO");
  return conv;
}

class StridedGemmConv : public ::testing::TestWithParam<SG> {};

TEST_P(StridedGemmConv, MatchesFloat64InEveryForm) {
  const SG c = GetParam();
  const uint64_t seed = 300 + static_cast<uint64_t>(c.k * 13 + c.s * 5 + c.t);
  const Tensor w = random_normal({c.co, c.ci, c.k}, seed, 0.2f);
  const Tensor b = c.bias ? random_normal({c.co}, seed + 1) : Tensor();
  Conv1d conv = make_layer(c, "gemm", w, b);
  const std::string impl = conv.impl_info({c.b, c.t, c.ci});
  EXPECT_EQ(impl.rfind("gemm:s" + std::to_string(c.s), 0), 0u) << impl;
  const Tensor x = random_uniform({c.b, c.t, c.ci}, seed + 2);
  const std::vector<double> bias = c.bias ? test::to_f64(b) : std::vector<double>{};
  int64_t To = 0;
  const auto ref = test::conv1d_ref(test::to_f64(x), c.b, c.t, c.ci, test::to_f64(w), c.co, c.k,
                                    bias, c.s, 1, c.pad, c.pad, &To);
  const Tensor y = conv.forward(x);
  ASSERT_EQ(y.shape(), Shape({c.b, To, c.co})) << impl;
  EXPECT_TRUE(close_rel_l2(y, test::from_f64(ref, {c.b, To, c.co}), kTolF32)) << impl;
  // The padded form (what a time shard runs: the halo is in the input, no padding added).
  if (c.t >= c.k) {
    int64_t Tv = 0;
    const auto valid = test::conv1d_ref(test::to_f64(x), c.b, c.t, c.ci, test::to_f64(w), c.co, c.k,
                                        bias, c.s, 1, 0, 0, &Tv);
    const Tensor yv = conv.forward_padded(x);
    ASSERT_EQ(yv.shape(), Shape({c.b, Tv, c.co})) << impl;
    EXPECT_TRUE(close_rel_l2(yv, test::from_f64(valid, {c.b, Tv, c.co}), kTolF32)) << impl;
  }
  // Accumulate into a random output.
  Tensor acc = random_uniform({c.b, To, c.co}, seed + 3);
  std::vector<double> want = test::to_f64(acc);
  for (size_t i = 0; i < want.size(); ++i) want[i] += ref[i];
  conv.forward_into(x, acc, true);
  EXPECT_TRUE(close_rel_l2(acc, test::from_f64(want, {c.b, To, c.co}), kTolF32)) << impl;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, StridedGemmConv,
    ::testing::Values(SG{2, 64, 48, 96, 8, 4, 2, true},  // H3 stage conv (k 2s, pad ⌈s/2⌉), s 4
                      SG{1, 75, 64, 128, 10, 5, 3, true},  // s 5, T not a multiple of s
                      SG{1, 50, 24, 48, 4, 2, 1, false},   // s 2, no bias
                      SG{1, 41, 16, 8, 7, 3, 2, true},     // K % s ≠ 0
                      SG{2, 23, 12, 20, 3, 5, 1, true},    // K < s
                      SG{1, 5, 16, 32, 8, 4, 2, true},     // every output row an edge row
                      SG{1, 9, 8, 8, 6, 2, 4, true},       // pad > K: leading rows all zeros
                      SG{2, 33, 64, 96, 2, 1, 1, true},    // 2 taps, stride 1 (polyphase phases)
                      SG{5, 23, 12, 20, 3, 5, 1, true},  // batches (stacked pushes) of every form:
                      SG{3, 5, 16, 32, 8, 4, 2, false},  //   every output row an edge row
                      SG{4, 17, 64, 96, 2, 1, 1, true},  //   polyphase phases
                      SG{3, 9, 8, 8, 6, 2, 4, true},     //   leading rows all zeros
                      SG{2, 600, 16, 24, 4, 2, 1, true}));  // long rows (300 outputs): one by one

// Batch rows of at least kStridedGemmStackMaxRows outputs (a stereo H3 encode) run one by one in
// place: each row's bits are those of the row alone.
TEST(StridedGemmConvBatch, LongRowsAreEachRowAloneBitForBit) {
  const SG c{3, 0, 32, 48, 8, 4, 2, true};  // s 4: 700 samples → 175 outputs (stacked), 1100 → 275
  for (const int64_t t : {int64_t{700}, int64_t{1100}}) {
    const Tensor w = random_normal({c.co, c.ci, c.k}, 71, 0.2f);
    const Tensor b = random_normal({c.co}, 72);
    Conv1d conv = make_layer(c, "gemm", w, b);
    const Tensor x = random_uniform({c.b, t, c.ci}, 73 + static_cast<uint64_t>(t));
    const Tensor y = conv.forward(x);
    for (int64_t r = 0; r < c.b; ++r) {
      const Tensor one = conv.forward(x.narrow(0, r, 1).clone());
      const Tensor row = y.narrow(0, r, 1).clone();
      ASSERT_EQ(one.shape(), row.shape());
      const bool long_rows = one.dim(1) >= kernels::kStridedGemmStackMaxRows;
      if (long_rows)
        EXPECT_EQ(std::memcmp(one.data<float>(), row.data<float>(), one.numel() * sizeof(float)), 0)
            << "row " << r << " of " << one.dim(1) << " outputs";
      else
        EXPECT_TRUE(close_rel_l2(row, one, kTolF32)) << "row " << r;
    }
  }
}

TEST(StridedGemmConvChoice, WideStridedByDefaultForcedByOverrideNeverDilated) {
  unsetenv("MESHNN_CONV_ALGO");
  EXPECT_EQ(conv::choose_conv1d({128, 256, 8, 4, 1}), conv::Conv1dAlgo::gemm);
  EXPECT_EQ(conv::choose_conv1d({1024, 2048, 10, 5, 1}), conv::Conv1dAlgo::gemm);
  EXPECT_EQ(conv::choose_conv1d({16, 32, 4, 2, 1}), conv::Conv1dAlgo::direct);  // thin
  // Ahead there on AVX2; behind oneDNN's AVX-512 kernels where the CPU has them
  // (conv_algorithm.cc).
  EXPECT_EQ(conv::choose_conv1d({64, 128, 4, 2, 1}),
            cpu_features().avx512f ? conv::Conv1dAlgo::onednn : conv::Conv1dAlgo::direct);
  EXPECT_EQ(conv::choose_conv1d({128, 128, 1, 1, 1}),
            cpu_features().avx512f ? conv::Conv1dAlgo::onednn : conv::Conv1dAlgo::direct);
  // A bf16 layer keeps the direct kernel (in f32) everywhere: docs/precision.md measures that.
  EXPECT_EQ(conv::choose_conv1d({128, 128, 1, 1, 1, Precision::bf16}), conv::Conv1dAlgo::direct);
  EXPECT_EQ(conv::choose_conv1d({128, 128, 7, 1, 1}), conv::Conv1dAlgo::winograd);
  EXPECT_EQ(conv::choose_conv1d({768, 1536, 2, 1, 1}), conv::Conv1dAlgo::gemm);  // 2-tap phases
  EXPECT_NE(conv::choose_conv1d({768, 768, 1, 1, 1}), conv::Conv1dAlgo::gemm);   // k 1: oneDNN
  setenv("MESHNN_CONV_ALGO", "gemm", 1);
  EXPECT_EQ(conv::choose_conv1d({16, 32, 4, 2, 1}), conv::Conv1dAlgo::gemm);
  EXPECT_NE(conv::choose_conv1d({128, 256, 8, 4, 2}), conv::Conv1dAlgo::gemm);  // dilated
  setenv("MESHNN_CONV_ALGO", "direct", 1);  // the path without our GEMM, for A/B runs
  EXPECT_NE(conv::choose_conv1d({128, 256, 8, 4, 1}), conv::Conv1dAlgo::gemm);
  unsetenv("MESHNN_CONV_ALGO");
}

}  // namespace
}  // namespace meshnn
