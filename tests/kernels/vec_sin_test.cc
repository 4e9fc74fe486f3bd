// Accuracy of the vectorised f32 sine against std::sin in double, over the ranges SnakeBeta sees
// (|α·x| up to ~1e3). Prints the measured maxima; bounds are set just above them.
#include "kernels/vec_sin.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "meshnn/core/cpu.h"

namespace meshnn::kernels {
namespace {

struct SinErr {
  double max_abs = 0;  // max |sin_f32(x) − sin(x)|, x the f32 input taken exactly
  double max_ulp = 0;  // in ulps of the f32 result, where |sin(x)| ≥ 2^-10
  float worst_x = 0;
};

double ulp_of(double v) {
  const float f = static_cast<float>(std::abs(v));
  return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity())) - f;
}

SinErr measure(const std::vector<float>& x, bool force_scalar) {
  std::vector<float> y(x.size());
  sin_f32(x.data(), y.data(), static_cast<int64_t>(x.size()), force_scalar);
  SinErr e;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::sin(static_cast<double>(x[i]));
    const double err = std::abs(static_cast<double>(y[i]) - ref);
    if (err > e.max_abs) e.max_abs = err, e.worst_x = x[i];
    if (std::abs(ref) >= 1.0 / 1024) e.max_ulp = std::max(e.max_ulp, err / ulp_of(ref));
  }
  return e;
}

std::vector<float> uniform(float lo, float hi, int n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = d(g);
  return v;
}

TEST(VecSin, AccuracyOverSnakeRanges) {
  if (!(cpu_features().avx2 && cpu_features().fma)) GTEST_SKIP() << "no AVX2+FMA";
  struct Range {
    float lo, hi;
    double abs_bound, ulp_bound;
  };
  for (const Range r : {Range{-3.2f, 3.2f, 1.2e-7, 2.0}, Range{-100.f, 100.f, 1.2e-7, 2.0},
                        Range{-1000.f, 1000.f, 1.2e-7, 2.0}, Range{-8192.f, 8192.f, 1.5e-7, 2.5}}) {
    const SinErr e = measure(uniform(r.lo, r.hi, 1 << 20, 7), false);
    std::printf(
        "sin_f32 avx2 on [%g, %g]: max abs err %.3g (at x = %.9g), max ulp err %.3f (|sin| ≥ "
        "2^-10)\n",
        r.lo, r.hi, e.max_abs, e.worst_x, e.max_ulp);
    EXPECT_LE(e.max_abs, r.abs_bound) << "range [" << r.lo << ", " << r.hi << "]";
    EXPECT_LE(e.max_ulp, r.ulp_bound) << "range [" << r.lo << ", " << r.hi << "]";
  }
}

TEST(VecSin, NearMultiplesOfHalfPi) {
  if (!(cpu_features().avx2 && cpu_features().fma)) GTEST_SKIP() << "no AVX2+FMA";
  // The floats closest to k·π/2 (and their neighbours) stress the range reduction.
  std::vector<float> x;
  for (int k = -1400; k <= 1400; ++k) {
    float f = static_cast<float>(k * M_PI / 2);
    for (int d = 0; d < 4; ++d) {
      x.push_back(f);
      f = std::nextafter(f, 1e9f);
    }
  }
  const SinErr e = measure(x, false);
  std::printf("sin_f32 avx2 near k·π/2, |x| ≤ 2200: max abs err %.3g (at x = %.9g)\n", e.max_abs,
              e.worst_x);
  EXPECT_LE(e.max_abs, 1.2e-7);
}

TEST(VecSin, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.f, -0.f, inf, -inf, std::nanf(""), 1e-30f, -1e-30f};
  std::vector<float> y(x.size());
  sin_f32(x.data(), y.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(y[0], 0.f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_FLOAT_EQ(y[5], 1e-30f);
  EXPECT_FLOAT_EQ(y[6], -1e-30f);
}

TEST(VecSin, OddLengthTailMatchesBody) {
  const std::vector<float> x = uniform(-50.f, 50.f, 13, 3);
  std::vector<float> a(13), b(13);
  sin_f32(x.data(), a.data(), 13);
  for (int i = 0; i < 13; ++i) sin_f32(&x[i], &b[i], 1);
  for (int i = 0; i < 13; ++i) EXPECT_EQ(a[i], b[i]) << i;
}

}  // namespace
}  // namespace meshnn::kernels
