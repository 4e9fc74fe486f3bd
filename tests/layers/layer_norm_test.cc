// LayerNorm (vlln, VL-SA norm1 / norm3: eps 1e-5, affine) against a float64 reference.
#include "layers/layer_norm.h"

#include <gtest/gtest.h>

#include "layers/gr00t_layers_ref.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

TEST(Gr00tLayerNorm, MatchesFloat64Reference) {
  for (int64_t D : {48, 2048}) {
    const int64_t M = 13;
    // A large common offset: a one-pass E[x²] − E[x]² variance would lose digits here.
    Tensor x = random_normal({M, D}, 11, 3.f);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] += 100.f;
    Tensor g = random_uniform({D}, 12, 0.5f, 1.5f), b = random_uniform({D}, 13);
    const Tensor want =
        ref::to_tensor(ref::layer_norm(ref::f64(x), ref::f64(g), ref::f64(b), M, D, 1e-5), {M, D});
    EXPECT_TRUE(close_rel_l2(layers::LayerNorm(g, b, 1e-5f).forward(x), want, 1e-6)) << "D=" << D;
  }
}

TEST(Gr00tLayerNorm, ConstantRowGivesBeta) {
  Tensor x({2, 16}), g = random_uniform({16}, 1), b = random_uniform({16}, 2);
  Tensor y = layers::LayerNorm(g, b, 1e-5f).forward(x);
  for (int64_t i = 0; i < 16; ++i) EXPECT_EQ(y.data<float>()[16 + i], b.data<float>()[i]);
}

TEST(Gr00tLayerNorm, RejectsWrongWidth) {
  layers::LayerNorm ln(Tensor({8}), Tensor({8}), 1e-5f);
  EXPECT_THROW(ln.forward(Tensor({2, 9})), ShapeError);
  EXPECT_THROW(layers::LayerNorm(Tensor({8}), Tensor({7}), 1e-5f), ShapeError);
}

}  // namespace
}  // namespace meshnn::test
