// Conv1d / Conv2d / ConvTranspose1d against float64 direct loops, all options; state-dict mapping;
// bad input.
#include "meshnn/layers/conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "layers/conv_ref.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::close_rel_l2;
using test::random_normal;
using test::random_uniform;

// f32 rounding of a depth-(Ci·K) dot product stays far below this (√n·2⁻²⁴ ≈ 1e-6 at n = 3584).
constexpr double kTolF32 = 1e-5;

Conv1dConfig c1cfg(int64_t ci, int64_t co, int64_t k, int64_t stride = 1, int64_t dil = 1) {
  Conv1dConfig c;
  c.in_channels = ci;
  c.out_channels = co;
  c.kernel_size = k;
  c.stride = stride;
  c.dilation = dil;
  return c;
}

struct C1 {
  int64_t b, t, ci, co, k, stride, dil;
  std::optional<int64_t> padding;
  const char* mode;
  bool bias;
};

class Conv1dRef : public ::testing::TestWithParam<C1> {};

TEST_P(Conv1dRef, MatchesFloat64) {
  const C1 c = GetParam();
  Conv1dConfig cfg;
  cfg.in_channels = c.ci;
  cfg.out_channels = c.co;
  cfg.kernel_size = c.k;
  cfg.stride = c.stride;
  cfg.dilation = c.dil;
  cfg.padding = c.padding;
  cfg.padding_mode = c.mode;
  cfg.bias = c.bias;
  Conv1d conv(cfg, "t");
  Tensor w = random_normal({c.co, c.ci, c.k}, 1, 0.2f);
  Tensor b = c.bias ? random_normal({c.co}, 2) : Tensor();
  conv.set_weights(w, b);
  Tensor x = random_uniform({c.b, c.t, c.ci}, 3);
  Tensor y = conv.forward(x);

  const int64_t eff = (c.k - 1) * c.dil + 1;
  int64_t pl, pr;
  if (std::string(c.mode) == "causal") {
    pl = eff - 1;
    pr = 0;
  } else {
    pl = pr = c.padding.value_or(eff / 2);
  }
  int64_t To = 0;
  auto ref = test::conv1d_ref(test::to_f64(x), c.b, c.t, c.ci, test::to_f64(w), c.co, c.k,
                              c.bias ? test::to_f64(b) : std::vector<double>{}, c.stride, c.dil, pl,
                              pr, &To);
  EXPECT_TRUE(close_rel_l2(y, test::from_f64(ref, {c.b, To, c.co}), kTolF32));

  // forward_padded on an explicitly zero-padded input = forward (the sharded path's contract).
  Tensor xp({c.b, c.t + pl + pr, c.ci});
  for (int64_t n = 0; n < c.b; ++n)
    std::memcpy(xp.data<float>() + (n * (c.t + pl + pr) + pl) * c.ci,
                x.data<float>() + n * c.t * c.ci, c.t * c.ci * sizeof(float));
  EXPECT_TRUE(test::bit_equal(conv.forward_padded(xp), y, "forward_padded") ||
              close_rel_l2(conv.forward_padded(xp), y, 1e-6));

  // forward_into with accumulate: y0 + conv(x).
  Tensor acc = random_uniform({c.b, To, c.co}, 9);
  Tensor expect = acc.clone();
  for (int64_t i = 0; i < expect.numel(); ++i) expect.data<float>()[i] += y.data<float>()[i];
  conv.forward_into(x, acc, /*accumulate=*/true);
  EXPECT_TRUE(close_rel_l2(acc, expect, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(
    Options, Conv1dRef,
    ::testing::Values(C1{1, 37, 5, 7, 3, 1, 1, std::nullopt, "zeros", true},
                      C1{2, 50, 16, 8, 7, 1, 3, std::nullopt, "zeros", true},
                      C1{1, 64, 24, 24, 11, 1, 5, std::nullopt, "zeros", true},
                      // dilation folding: zero-copy (T and pads multiples of d) and padded copy
                      C1{2, 48, 16, 8, 7, 1, 3, std::nullopt, "zeros", true},
                      C1{1, 30, 6, 6, 3, 1, 3, std::nullopt, "causal", true},
                      C1{2, 31, 5, 9, 4, 1, 5, std::nullopt, "zeros", true},
                      C1{1, 50, 200, 16, 3, 1, 2, std::nullopt, "zeros", true},  // > fold limit
                      C1{2, 33, 6, 10, 5, 2, 1, std::nullopt, "zeros", false},
                      C1{1, 41, 8, 8, 4, 2, 1, 1, "zeros", true},  // DAC: k=2s, ceil(s/2)
                      C1{1, 45, 9, 4, 3, 3, 2, 0, "zeros", true},
                      C1{2, 29, 7, 5, 3, 1, 2, std::nullopt, "causal", true},
                      C1{1, 31, 4, 6, 4, 2, 1, std::nullopt, "causal", false},
                      C1{1, 20, 3, 3, 1, 1, 1, std::nullopt, "zeros", true},
                      C1{1, 7, 4, 4, 7, 1, 1, std::nullopt, "zeros", true},  // k = T
                      C1{1, 9, 5, 6, 11, 1, 1, std::nullopt, "zeros", true}));

struct C2 {
  int64_t b, h, w, ci, co, kh, kw, sh, sw;
  const char* mode;
};
class Conv2dRef : public ::testing::TestWithParam<C2> {};

TEST_P(Conv2dRef, MatchesFloat64) {
  const C2 c = GetParam();
  Conv2dConfig cfg;
  cfg.in_channels = c.ci;
  cfg.out_channels = c.co;
  cfg.kernel_size = {c.kh, c.kw};
  cfg.stride = {c.sh, c.sw};
  cfg.padding_mode = c.mode;
  Conv2d conv(cfg, "t2");
  Tensor w = random_normal({c.co, c.ci, c.kh, c.kw}, 4, 0.2f);
  Tensor b = random_normal({c.co}, 5);
  conv.set_weights(w, b);
  Tensor x = random_uniform({c.b, c.h, c.w, c.ci}, 6);
  Tensor y = conv.forward(x);
  const std::string mode = c.mode;
  int64_t pl[2], pr[2];
  const int64_t k[2] = {c.kh, c.kw};
  for (int a = 0; a < 2; ++a) {
    const bool causal = (mode == "causal_height" && a == 0) || (mode == "causal_width" && a == 1);
    if (mode == "zeros") {
      pl[a] = pr[a] = k[a] / 2;
    } else if (causal) {
      pl[a] = k[a] - 1;
      pr[a] = 0;
    } else {
      pl[a] = (k[a] - 1) / 2;
      pr[a] = k[a] - 1 - pl[a];
    }
  }
  const int64_t st[2] = {c.sh, c.sw}, dil[2] = {1, 1};
  int64_t Ho, Wo;
  auto ref = test::conv2d_ref(test::to_f64(x), c.b, c.h, c.w, c.ci, test::to_f64(w), c.co, c.kh,
                              c.kw, test::to_f64(b), st, dil, pl, pr, &Ho, &Wo);
  EXPECT_TRUE(close_rel_l2(y, test::from_f64(ref, {c.b, Ho, Wo, c.co}), kTolF32));
  if (mode == "causal_height") {
    EXPECT_EQ(Ho, (c.h - 1) / c.sh + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Options, Conv2dRef,
                         ::testing::Values(C2{1, 9, 16, 8, 12, 3, 3, 1, 1, "causal_height"},
                                           C2{2, 7, 10, 5, 3, 3, 3, 1, 1, "causal_width"},
                                           C2{1, 11, 8, 4, 6, 3, 3, 1, 1, "zeros"},
                                           C2{1, 13, 9, 3, 5, 3, 2, 2, 1, "causal_height"},
                                           C2{1, 6, 6, 7, 4, 1, 1, 1, 1, "causal_height"},
                                           C2{1, 10, 12, 4, 4, 5, 3, 2, 2, "zeros"}));

struct CT {
  int64_t b, t, ci, co, k, stride, dil;
  std::optional<int64_t> padding;
  int64_t output_padding;
  bool bias;
};
class ConvTranspose1dRef : public ::testing::TestWithParam<CT> {};

TEST_P(ConvTranspose1dRef, MatchesFloat64) {
  const CT c = GetParam();
  ConvTranspose1dConfig cfg;
  cfg.in_channels = c.ci;
  cfg.out_channels = c.co;
  cfg.kernel_size = c.k;
  cfg.stride = c.stride;
  cfg.dilation = c.dil;
  cfg.padding = c.padding;
  cfg.output_padding = c.output_padding;
  cfg.bias = c.bias;
  ConvTranspose1d up(cfg, "ups");
  Tensor w = random_normal({c.ci, c.co, c.k}, 7, 0.2f);
  Tensor b = c.bias ? random_normal({c.co}, 8) : Tensor();
  up.set_weights(w, b);
  Tensor x = random_uniform({c.b, c.t, c.ci}, 10);
  Tensor y = up.forward(x);
  int64_t To;
  const int64_t P = c.padding.value_or((c.k - c.stride) / 2);
  auto ref = test::conv_transpose1d_ref(test::to_f64(x), c.b, c.t, c.ci, test::to_f64(w), c.co, c.k,
                                        c.bias ? test::to_f64(b) : std::vector<double>{}, c.stride,
                                        c.dil, P, c.output_padding, &To);
  EXPECT_TRUE(close_rel_l2(y, test::from_f64(ref, {c.b, To, c.co}), kTolF32));
}

INSTANTIATE_TEST_SUITE_P(
    Options, ConvTranspose1dRef,
    ::testing::Values(CT{1, 17, 16, 8, 11, 5, 1, std::nullopt, 0, true},  // LTX ups.0
                      CT{2, 23, 8, 4, 4, 2, 1, std::nullopt, 0, true},    // ups.1..5
                      CT{1, 13, 12, 6, 12, 6, 1, std::nullopt, 0, true},  // BWE ups.0
                      CT{1, 9, 6, 5, 16, 8, 1, std::nullopt, 0, false},
                      CT{1, 11, 5, 7, 3, 2, 1, 1, 1, true},  // output_padding
                      CT{2, 10, 4, 3, 5, 3, 2, 2, 2, true},  // dilation
                      CT{1, 8, 3, 5, 3, 1, 1, 0, 0, true}));

// ---- state dict ----------------------------------------------------------------------------

TEST(ConvStateDict, WeightNormFoldAndAliases) {
  Tensor v = random_normal({6, 4, 3}, 11);
  Tensor g = random_uniform({6, 1, 1}, 12, 0.5f, 2.f);
  Tensor b = random_normal({6}, 13);
  std::map<std::string, Tensor> st{
      {"blk.conv.weight_g", g}, {"blk.conv.weight_v", v}, {"blk.conv.bias", b}};
  ConvWeights cw = map_conv1d_state(lookup_in(st), "blk", 4, 6, 3, true);
  for (int64_t o = 0; o < 6; ++o) {
    double ss = 0;
    for (int64_t j = 0; j < 12; ++j) ss += std::pow(double(v.data<float>()[o * 12 + j]), 2);
    for (int64_t j = 0; j < 12; ++j)
      EXPECT_NEAR(cw.weight.get().data<float>()[o * 12 + j],
                  g.data<float>()[o] * v.data<float>()[o * 12 + j] / std::sqrt(ss), 1e-6);
  }
  // Plain and parametrised spellings give the same tensors.
  std::map<std::string, Tensor> st2{{"blk.weight", cw.weight.get()}, {"blk.bias", b}};
  EXPECT_TRUE(test::bit_equal(map_conv1d_state(lookup_in(st2), "blk.", 4, 6, 3, true).weight.get(),
                              cw.weight.get()));
  std::map<std::string, Tensor> st3{{"blk.parametrizations.weight.original0", g},
                                    {"blk.parametrizations.weight.original1", v},
                                    {"blk.bias", b}};
  EXPECT_TRUE(test::bit_equal(map_conv1d_state(lookup_in(st3), "blk", 4, 6, 3, true).weight.get(),
                              cw.weight.get()));
}

TEST(ConvStateDict, TransposeWeightNormIsPerInputChannel) {
  // (C_in, C_out, K): the fold normalises each dim-0 (input channel) slice.
  Tensor v = random_normal({5, 3, 4}, 14);
  Tensor g = random_uniform({5, 1, 1}, 15, 0.5f, 2.f);
  std::map<std::string, Tensor> st{{"ups.0.0.weight_g", g}, {"ups.0.0.weight_v", v}};
  ConvWeights cw = map_conv_transpose1d_state(lookup_in(st), "ups.0.0", 5, 3, 4, false);
  for (int64_t i = 0; i < 5; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < 12; ++j)
      ss += std::pow(double(cw.weight.get().data<float>()[i * 12 + j]), 2);
    EXPECT_NEAR(std::sqrt(ss), g.data<float>()[i], 1e-5);
  }
}

TEST(ConvStateDict, MissingAndMisshapedKeysNameTheKey) {
  std::map<std::string, Tensor> st{{"a.weight", Tensor({6, 4, 5})}, {"a.bias", Tensor({6})}};
  try {
    map_conv1d_state(lookup_in(st), "a", 4, 6, 3, true);
    FAIL() << "no throw";
  } catch (const WeightError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("a.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("(6, 4, 5)"), std::string::npos) << m;
    EXPECT_NE(m.find("(6, 4, 3)"), std::string::npos) << m;
  }
  try {
    map_conv1d_state(lookup_in(st), "missing", 4, 6, 5, true);
    FAIL() << "no throw";
  } catch (const WeightError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.weight"), std::string::npos) << e.what();
  }
  std::map<std::string, Tensor> nobias{{"a.weight", Tensor({6, 4, 3})}};
  EXPECT_THROW(map_conv1d_state(lookup_in(nobias), "a", 4, 6, 3, true), WeightError);
  std::map<std::string, Tensor> half{{"a.weight_g", Tensor({6, 1, 1})}};
  EXPECT_THROW(map_conv1d_state(lookup_in(half), "a", 4, 6, 3, false), WeightError);
  std::map<std::string, Tensor> badg{{"a.weight_g", Tensor({3, 1, 1})},
                                     {"a.weight_v", Tensor({6, 4, 3})}};
  EXPECT_THROW(map_conv1d_state(lookup_in(badg), "a", 4, 6, 3, false), WeightError);
  Conv1dConfig cfg = c1cfg(4, 6, 3);
  Conv1d c(cfg, "layer");
  EXPECT_THROW(c.load(st, "a"), WeightError);
}

// ---- bad input -----------------------------------------------------------------------------

TEST(ConvBadInput, NamedErrors) {
  Conv1dConfig cfg = c1cfg(4, 6, 3);
  EXPECT_THROW(Conv1d(c1cfg(4, 6, 3, 0), "s"), InvalidArgument);      // stride 0
  EXPECT_THROW(Conv1d(c1cfg(4, 6, 3, 1, -1), "d"), InvalidArgument);  // dilation < 0
  EXPECT_THROW(Conv1d(c1cfg(4, 6, 0), "k"), InvalidArgument);
  Conv1dConfig bad_mode = cfg;
  bad_mode.padding_mode = "reflect";
  try {
    Conv1d c(bad_mode, "my.conv");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("my.conv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reflect"), std::string::npos) << e.what();
  }
  Conv2dConfig c2;
  c2.in_channels = c2.out_channels = 2;
  c2.padding_mode = "causal";
  EXPECT_THROW(Conv2d(c2, "c2"), InvalidArgument);
  ConvTranspose1dConfig ct;
  ct.in_channels = ct.out_channels = ct.kernel_size = 4;
  ct.stride = 2;
  ct.output_padding = 2;
  EXPECT_THROW(ConvTranspose1d(ct, "ct"), InvalidArgument);

  Conv1d c(cfg, "layer");
  EXPECT_THROW(c.forward(Tensor({1, 8, 4})), InvalidArgument);  // not loaded
  c.set_weights(random_normal({6, 4, 3}, 1), random_normal({6}, 2));
  EXPECT_THROW(c.forward(Tensor({8, 4})), ShapeError);     // rank
  EXPECT_THROW(c.forward(Tensor({1, 8, 5})), ShapeError);  // channels
  EXPECT_THROW(c.forward(Tensor({1, 8, 4}, DType::bf16)), ShapeError);
  Tensor wrong_out({1, 7, 6});
  EXPECT_THROW(c.forward_into(Tensor({1, 8, 4}), wrong_out), ShapeError);
  // Kernel larger than the padded input: valid conv of k=3 on 2 rows.
  try {
    c.forward_padded(Tensor({1, 2, 4}));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("layer"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.set_weights(Tensor({6, 4, 2}), Tensor({6})), WeightError);
  EXPECT_THROW(c.set_weights(Tensor({6, 4, 3}), Tensor({5})), WeightError);
}

}  // namespace
}  // namespace meshnn
