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

Conv2d build(const char* algo, const Tensor& w, const Tensor& b) {
  setenv("MESHNN_CONV_ALGO", algo, 1);  // read when the weights are set
  Conv2dConfig c;
  c.in_channels = w.dim(1);
  c.out_channels = w.dim(0);
  c.kernel_size = {3, 3};
  c.padding_mode = "causal_height";
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

}  // namespace
}  // namespace meshnn
