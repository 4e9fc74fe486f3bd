// Linear (oneDNN matmul, packed weights, fused bias / ReLU / GELU-tanh / residual) against a
// float64 reference.
#include "layers/linear.h"

#include <gtest/gtest.h>

#include "layers/gr00t_layers_ref.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using layers::Activation;
using layers::Linear;

struct Case {
  int64_t M, K, N;
  Activation act;
};

class Gr00tLinearTest : public ::testing::TestWithParam<Case> {};

TEST_P(Gr00tLinearTest, MatchesFloat64Reference) {
  const Case c = GetParam();
  Tensor x = random_normal({c.M, c.K}, 1), w = random_uniform({c.N, c.K}, 2, -0.3f, 0.3f),
         b = random_uniform({c.N}, 3);
  const int act = c.act == Activation::relu ? 1 : c.act == Activation::gelu_tanh ? 2 : 0;
  const Tensor want = ref::to_tensor(
      ref::linear(ref::f64(x), ref::f64(w), ref::f64(b), c.M, c.K, c.N, act), {c.M, c.N});
  // nn.Linear layout [out, in]
  EXPECT_TRUE(close_rel_l2(Linear::from_out_in(w, b, c.act).forward(x), want, 1e-6, "out_in"));
  // CategorySpecificLinear layout [in, out]
  Tensor w_t({c.K, c.N});
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t k = 0; k < c.K; ++k) w_t.data<float>()[k * c.N + n] = w.data<float>()[n * c.K + k];
  EXPECT_TRUE(close_rel_l2(Linear::from_in_out(w_t, b, c.act).forward(x), want, 1e-6, "in_out"));
}

INSTANTIATE_TEST_SUITE_P(Gr00t, Gr00tLinearTest,
                         ::testing::Values(Case{1, 64, 48, Activation::none},
                                           Case{37, 70, 45, Activation::relu},
                                           Case{64, 128, 96, Activation::gelu_tanh},
                                           Case{300, 256, 64, Activation::none}));

TEST(Gr00tLinear, AccumulateAddsResidualInStridedRows) {
  const int64_t M = 19, K = 40, N = 24, ldd = 30;
  Tensor x = random_normal({M, K}, 4), w = random_uniform({N, K}, 5, -0.3f, 0.3f),
         b = random_uniform({N}, 6);
  Tensor dst = random_normal({M, ldd}, 7);
  Tensor before = dst.clone();
  const auto y = ref::linear(ref::f64(x), ref::f64(w), ref::f64(b), M, K, N);
  Linear::from_out_in(w, b).forward_rows(x.data<float>(), M, K, dst.data<float>(), ldd, true);
  double err = 0, den = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < ldd; ++n) {
      const double got = dst.data<float>()[m * ldd + n];
      const double want = before.data<float>()[m * ldd + n] + (n < N ? y[m * N + n] : 0.0);
      err += (got - want) * (got - want);
      den += want * want;
    }
  EXPECT_LT(std::sqrt(err / den), 1e-6);
}

TEST(Gr00tLinear, Bf16MatchesReferenceOnRoundedOperands) {
  const int64_t M = 33, K = 96, N = 40;
  Tensor x = random_normal({M, K}, 8), w = random_uniform({N, K}, 9, -0.3f, 0.3f),
         b = random_uniform({N}, 10);
  // bf16 operands, f32 accumulation: exact against a f64 product of the rounded operands up to
  // the f32 accumulation error.
  const Tensor want = ref::to_tensor(
      ref::linear(ref::f64(ref::bf16_round(x)), ref::f64(ref::bf16_round(w)), ref::f64(b), M, K, N),
      {M, N});
  Linear l = Linear::from_out_in(w, b, Activation::none, Precision::bf16);
  EXPECT_TRUE(close_rel_l2(l.forward(x), want, 1e-6));
  // ... and it does differ from the f32 result by the bf16 rounding.
  const Tensor f32 = Linear::from_out_in(w, b).forward(x);
  EXPECT_GT(compare(l.forward(x), f32).rel_l2, 1e-4);
}

TEST(Gr00tLinear, RejectsBadShapesAndModes) {
  Tensor w = random_uniform({8, 4}, 1);
  EXPECT_THROW(Linear::from_out_in(w, Tensor({5})), ShapeError);
  EXPECT_THROW(Linear::from_out_in(w, Tensor(), Activation::none, Precision::bf16x3), Unsupported);
  Linear l = Linear::from_out_in(w, Tensor());
  EXPECT_THROW(l.forward(Tensor({3, 5})), ShapeError);
}

}  // namespace
}  // namespace meshnn::test
