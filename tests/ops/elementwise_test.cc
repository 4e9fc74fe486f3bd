#include "ops/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/golden.h"

namespace meshnn::ops {
namespace {

TEST(Elementwise, PixelNormSiluMatchesFloat64Reference) {
  for (int64_t c : {1, 7, 128, 512}) {
    Tensor x = test::random_normal({1, 5, 3, c}, 11 + c, 2.f);
    Tensor y(x.shape());
    pixel_norm_silu(x, y, 1e-6f);
    Tensor ref(x.shape(), DType::f64);
    const float* s = x.data<float>();
    for (int64_t r = 0; r < x.numel() / c; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < c; ++i) ss += double(s[r * c + i]) * s[r * c + i];
      const double inv = 1 / std::sqrt(ss / c + 1e-6);
      for (int64_t i = 0; i < c; ++i) {
        const double v = s[r * c + i] * inv;
        ref.data<double>()[r * c + i] = v / (1 + std::exp(-v));
      }
    }
    EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-6, "pixel_norm_silu"));
    // In place gives the same bits.
    Tensor xi = x.clone();
    pixel_norm_silu(xi, xi, 1e-6f);
    EXPECT_TRUE(test::bit_equal(xi, y));
  }
}

TEST(Elementwise, NearestUpsample) {
  Tensor x = test::random_uniform({2, 3, 4, 5}, 3);
  Tensor y = upsample_nearest2x_hw(x);
  ASSERT_EQ(y.shape(), (Shape{2, 6, 8, 5}));
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < 6; ++h)
      for (int w = 0; w < 8; ++w)
        for (int c = 0; c < 5; ++c)
          ASSERT_EQ(y.data<float>()[((b * 6 + h) * 8 + w) * 5 + c],
                    x.data<float>()[((b * 3 + h / 2) * 4 + w / 2) * 5 + c]);
  EXPECT_THROW(upsample_nearest2x_hw(Tensor({3, 4})), ShapeError);
}

TEST(Elementwise, Mean3OrderAndPointwise) {
  Tensor a = test::random_normal({1000}, 1), b = test::random_normal({1000}, 2),
         c = test::random_normal({1000}, 3);
  Tensor d({1000});
  mean3(a, b, c, d);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(d.data<float>()[i],
              ((a.data<float>()[i] + b.data<float>()[i]) + c.data<float>()[i]) / 3.f);
  Tensor e = a.clone();
  leaky_relu_(e, 0.1f);
  clamp_(e, -0.5f, 0.5f);
  for (int i = 0; i < 1000; ++i) {
    float v = a.data<float>()[i];
    v = v > 0 ? v : 0.1f * v;
    v = std::min(0.5f, std::max(-0.5f, v));
    ASSERT_EQ(e.data<float>()[i], v);
  }
  EXPECT_THROW(mean3(a, b, Tensor({999}), d), ShapeError);
}

}  // namespace
}  // namespace meshnn::ops
