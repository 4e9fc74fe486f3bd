// ops::softmax_row, the one softmax of every attention, against a float64 scalar reference:
// random rows (short and attention-length), masked keys, NaN rows, all-masked and all −inf rows,
// and logits far beyond exp's f32 range.
#include "ops/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace meshnn::ops {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// float64 softmax over the valid entries (hidden ones 0); all hidden or all −inf → zeros.
std::vector<double> reference(const std::vector<float>& x, const std::vector<uint8_t>& valid) {
  const size_t n = x.size();
  double mx = -INFINITY;
  for (size_t j = 0; j < n; ++j)
    if (valid.empty() || valid[j]) mx = std::max(mx, static_cast<double>(x[j]));
  std::vector<double> p(n, 0.0);
  if (mx == -INFINITY) return p;
  double sum = 0;
  for (size_t j = 0; j < n; ++j)
    if (valid.empty() || valid[j]) sum += p[j] = std::exp(static_cast<double>(x[j]) - mx);
  for (double& v : p) v /= sum;
  return p;
}

// Runs softmax_row on a copy of x and checks it against the reference: each output within 2e-6
// relative of the f64 value (f32 rounding of x − max, exp, 1/sum and the product).
void expect_matches(const std::vector<float>& x, const std::vector<uint8_t>& valid,
                    const char* what) {
  std::vector<float> y = x;
  softmax_row(y.data(), static_cast<int64_t>(y.size()), valid.empty() ? nullptr : valid.data());
  const std::vector<double> want = reference(x, valid);
  double sum = 0;
  for (size_t j = 0; j < y.size(); ++j) {
    ASSERT_NEAR(y[j], want[j], 2e-6 * want[j] + 1e-37) << what << " entry " << j;
    if (!valid.empty() && !valid[j]) {
      ASSERT_EQ(y[j], 0.f) << what << " hidden entry " << j;
    }
    sum += y[j];
  }
  bool any = false;
  for (double v : want) any |= v > 0;
  if (any) {
    EXPECT_NEAR(sum, 1.0, 1e-5) << what;
  }
}

TEST(Softmax, RandomRowsMatchFloat64) {
  std::mt19937_64 rng(33);
  for (int64_t n : {1, 2, 7, 64, 301, 1024}) {
    std::normal_distribution<float> logit(0.5f, 3.f);
    std::vector<float> x(n);
    for (float& v : x) v = logit(rng);
    expect_matches(x, {}, "unmasked");
    // About a third of the keys hidden, one always valid; the hidden ones hold garbage.
    std::vector<uint8_t> valid(n);
    for (int64_t j = 0; j < n; ++j) valid[j] = (rng() % 3) != 0 || j == n / 2;
    for (int64_t j = 0; j < n; ++j)
      if (!valid[j]) x[j] = j % 2 ? 1e30f : kNan;
    expect_matches(x, valid, "masked");
  }
}

TEST(Softmax, LargeAndSmallLogits) {
  // exp of these overflows or underflows in f32 without the max subtraction.
  expect_matches({1000.f, 999.f, 990.f, 1000.f}, {}, "large");
  expect_matches({-1000.f, -1001.f, -1010.f, -2000.f}, {}, "small");
  expect_matches({3e38f, -3e38f, 0.f}, {}, "extremes");
  expect_matches({1e-30f, -1e-30f, 0.f, 1e-38f}, {}, "near zero");
  // −inf logits give exact zeros, the rest a softmax of its own.
  expect_matches({-kInf, 2.f, -kInf, 1.f}, {}, "-inf entries");
}

TEST(Softmax, NanInAValidEntryMakesTheRowNan) {
  for (size_t at : {0u, 3u, 6u}) {
    std::vector<float> x = {0.5f, -1.f, 2.f, 0.25f, -kInf, 1.f, 3.f};
    x[at] = kNan;
    softmax_row(x.data(), 7);
    for (size_t j = 0; j < x.size(); ++j) EXPECT_TRUE(std::isnan(x[j])) << at << " " << j;
  }
  std::vector<float> all(5, kNan);
  softmax_row(all.data(), 5);
  for (float v : all) EXPECT_TRUE(std::isnan(v));
  // A +inf logit: exp(inf − inf) is NaN, as in torch.softmax.
  std::vector<float> inf = {1.f, kInf, 0.f};
  softmax_row(inf.data(), 3);
  for (float v : inf) EXPECT_TRUE(std::isnan(v));
  // A NaN behind the mask is never read.
  std::vector<float> hidden = {kNan, 1.f, 2.f};
  const std::vector<uint8_t> valid = {0, 1, 1};
  expect_matches(hidden, valid, "NaN hidden");
}

TEST(Softmax, AllMaskedOrAllMinusInfRowIsZero) {
  // Decided: zeros, as torch's scaled_dot_product_attention (not torch.softmax's NaN).
  std::vector<float> x = {1.f, kNan, 3.f, 4.f};
  const std::vector<uint8_t> none = {0, 0, 0, 0};
  softmax_row(x.data(), 4, none.data());
  for (float v : x) EXPECT_EQ(v, 0.f);
  std::vector<float> ninf(6, -kInf);
  softmax_row(ninf.data(), 6);
  for (float v : ninf) EXPECT_EQ(v, 0.f);
  softmax_row(nullptr, 0);  // empty row: nothing to do
}

TEST(Softmax, SumOrderDoesNotChangeTheBits) {
  // The f64 sum makes the result independent of the key order (up to the entries' own order).
  std::mt19937_64 rng(7);
  std::normal_distribution<float> logit(0.f, 2.f);
  std::vector<float> x(300);
  for (float& v : x) v = logit(rng);
  std::vector<float> r(x.rbegin(), x.rend());
  softmax_row(x.data(), 300);
  softmax_row(r.data(), 300);
  for (size_t j = 0; j < 300; ++j) ASSERT_EQ(x[j], r[299 - j]) << j;
}

}  // namespace
}  // namespace meshnn::ops
