// Conv2d on the Winograd F(2×2, 3×3) path (MESHNN_CONV_ALGO=winograd) against the same layer on
// oneDNN (MESHNN_CONV_ALGO=onednn): forward with causal pads, forward_padded (valid in time, as a
// time shard runs it), forward_into with accumulate, and a copy (shared weights) — the layer
// plumbing around the kernel that tests/kernels/winograd2d_test.cc checks against float64.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernels/winograd1d.h"
#include "meshnn/layers/conv.h"
#include "support/golden.h"

namespace meshnn {
namespace {

Conv2d build(const char* algo, const Tensor& w, const Tensor& b,
             Precision precision = Precision::fp32) {
  setenv("MESHNN_CONV_ALGO", algo, 1);  // read when the weights are set
  Conv2dConfig c;
  c.in_channels = w.dim(1);
  c.out_channels = w.dim(0);
  c.kernel_size = {3, 3};
  c.padding_mode = "causal_height";
  c.precision = precision;
  Conv2d layer(c, std::string("c2_") + algo);
  layer.set_weights(w, b);
  unsetenv("MESHNN_CONV_ALGO");
  return layer;
}

TEST(Conv2dWinograd, MatchesOneDnnThroughTheLayer) {
  if (!kernels::winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  const Tensor w = test::random_normal({24, 20, 3, 3}, 1, 0.07f);
  const Tensor b = test::random_normal({24}, 2, 0.1f);
  Conv2d wino = build("winograd", w, b), ref = build("onednn", w, b);
  EXPECT_NE(wino.impl_info({1, 9, 7, 20}).find("winograd"), std::string::npos);
  const Tensor x = test::random_uniform({2, 9, 7, 20}, 3);
  EXPECT_TRUE(test::close_rel_l2(wino.forward(x), ref.forward(x), 1e-6, "forward"));
  EXPECT_TRUE(
      test::close_rel_l2(wino.forward_padded(x), ref.forward_padded(x), 1e-6, "forward_padded"));
  Tensor y1 = test::random_uniform({2, 9, 7, 24}, 4), y2 = y1.clone();
  wino.forward_into(x, y1, true);
  ref.forward_into(x, y2, true);
  EXPECT_TRUE(test::close_rel_l2(y1, y2, 1e-6, "accumulate"));
  Conv2d copy(wino);
  EXPECT_TRUE(test::close_rel_l2(copy.forward(x), ref.forward(x), 1e-6, "copy"));
}

// bf16 through the layers: the default (and MESHNN_CONV_ALGO=winograd) routes Conv1d and Conv2d
// in bf16 to the bf16 Winograd kernels (native vdpbf16ps here, emulated elsewhere),
// MESHNN_CONV_ALGO=onednn keeps oneDNN's bf16 conv; both are within the bf16 Winograd bound of the
// kernel tests (1.5 · 2.2e-3 · κ, κ(F(3,3)) = 2.45, κ(F(2×2,3×3)) ≤ that) of the fp32 result.
TEST(ConvBf16Winograd, RoutedByTheOverride) {
  if (!kernels::winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  const Tensor w = test::random_normal({64, 64, 3, 3}, 11, 0.04f);
  const Tensor b = test::random_normal({64}, 12, 0.1f);
  Conv2d wino = build("auto", w, b, Precision::bf16), def = build("onednn", w, b, Precision::bf16);
  Conv2d f32 = build("onednn", w, b);
  EXPECT_NE(wino.impl_info({1, 9, 7, 64}).find("winograd"), std::string::npos);
  EXPECT_EQ(def.impl_info({1, 9, 7, 64}).find("winograd"), std::string::npos)
      << def.impl_info({1, 9, 7, 64});
  const Tensor x = test::random_uniform({1, 9, 7, 64}, 13);
  const Tensor ref = f32.forward(x);
  EXPECT_TRUE(test::close_rel_l2(wino.forward(x), ref, 8e-3, "conv2d bf16 winograd"));
  EXPECT_TRUE(test::close_rel_l2(def.forward(x), ref, 8e-3, "conv2d bf16 onednn"));

  const Tensor w1 = test::random_normal({96, 96, 7}, 14, 0.04f);
  const Tensor b1 = test::random_normal({96}, 15, 0.1f);
  auto conv1 = [&](const char* algo, Precision p) {
    setenv("MESHNN_CONV_ALGO", algo, 1);
    Conv1dConfig c;
    c.in_channels = c.out_channels = 96;
    c.kernel_size = 7;
    c.dilation = 3;
    c.padding = 9;  // "same": (K − 1)·d / 2
    c.precision = p;
    Conv1d layer(c, "c1");
    layer.set_weights(w1, b1);
    unsetenv("MESHNN_CONV_ALGO");
    return layer;
  };
  Conv1d w16 = conv1("winograd", Precision::bf16), r32 = conv1("onednn", Precision::fp32);
  EXPECT_NE(w16.impl_info({1, 100, 96}).find("winograd:F(3,3)"), std::string::npos)
      << w16.impl_info({1, 100, 96});
  const Tensor x1 = test::random_uniform({1, 100, 96}, 16);
  EXPECT_TRUE(test::close_rel_l2(w16.forward(x1), r32.forward(x1), 8e-3, "conv1d bf16 winograd"));
}

}  // namespace
}  // namespace meshnn
