// The direct small-channel conv kernel against its float64 scalar reference: channel counts on
// and off the 8-lane vector width (remainder blocks of 1 and 2 vectors), strides, dilations, pads
// larger than the reach, inputs shorter than the kernel (edge rows only) and accumulate.
#include "kernels/conv1d_direct.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/conv1d_ref.h"

namespace meshnn::kernels {
namespace {

std::vector<float> uniform(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct Case {
  int64_t ci, co, k, stride, dil, T, pad_l, pad_r;
  bool bias, accumulate;
};

void check(const Case& c, uint64_t seed) {
  const std::vector<float> w = uniform(static_cast<size_t>(c.co * c.ci * c.k), seed);
  const std::vector<float> b = uniform(static_cast<size_t>(c.co), seed + 1);
  const std::vector<float> x = uniform(static_cast<size_t>(c.T * c.ci), seed + 2);
  const int64_t span = c.T + c.pad_l + c.pad_r - (c.k - 1) * c.dil;
  const int64_t T_out = span <= 0 ? 0 : (span - 1) / c.stride + 1;
  const std::vector<float> y0 = uniform(static_cast<size_t>(T_out * c.co), seed + 3);
  std::vector<float> got = y0, want = y0;
  const DirectConv1dWeights p =
      pack_direct_conv1d(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci, c.k, c.stride, c.dil);
  direct_conv1d(p, x.data(), c.T, c.pad_l, got.data(), T_out, c.accumulate);
  test::direct_conv1d_reference(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci, c.k, c.stride,
                                c.dil, x.data(), c.T, c.pad_l, want.data(), T_out, c.accumulate);
  // f32 accumulation over K·C_in terms of magnitude ≤ 1: bound the error by that count.
  const double tol = 4e-7 * static_cast<double>(c.k * c.ci + 2);
  double worst = 0;
  int64_t worst_i = -1;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(static_cast<double>(got[i]) - want[i]);
    if (e > worst) worst = e, worst_i = static_cast<int64_t>(i);
  }
  EXPECT_LE(worst, tol) << "ci=" << c.ci << " co=" << c.co << " k=" << c.k << " s=" << c.stride
                        << " d=" << c.dil << " T=" << c.T << " l=" << c.pad_l << " r=" << c.pad_r
                        << " acc=" << c.accumulate << ": worst at row " << worst_i / c.co
                        << " channel " << worst_i % c.co;
}

TEST(DirectConv1d, MatchesFloat64Reference) {
  if (!direct_conv1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  const Case cases[] = {
      {24, 24, 3, 1, 1, 1000, 1, 1, true, false},    // AMP C=24, one 3-vector block
      {24, 2, 7, 1, 1, 777, 3, 3, false, false},     // conv_post: 1 masked vector
      {48, 48, 7, 1, 3, 513, 9, 9, true, false},     // two 3-vector blocks, dilation
      {96, 96, 11, 1, 5, 300, 25, 25, true, true},   // accumulate (residual add)
      {20, 44, 5, 1, 2, 301, 4, 4, true, false},     // 6 vectors: 3 + 3 (last masked)
      {13, 40, 3, 1, 1, 129, 1, 1, true, false},     // 5 vectors: 3 + 2 remainder
      {16, 32, 7, 1, 3, 300, 9, 9, true, true},      // 4 vectors: 2 + 2 (no 1-vector block)
      {24, 56, 11, 1, 5, 200, 25, 25, true, false},  // 7 vectors: 3 + 2 + 2
      {7, 9, 4, 2, 1, 250, 1, 1, true, false},       // stride 2, 2 vectors (second masked)
      {16, 8, 12, 6, 1, 400, 3, 3, true, true},      // stride 6, 1 vector
      {24, 24, 7, 1, 3, 5, 9, 9, true, false},       // T shorter than the reach: edge rows only
      {8, 24, 3, 1, 1, 64, 0, 0, true, false},       // valid conv, no pads
      {24, 24, 7, 1, 1, 200, 6, 0, true, false},     // causal: front pad K − 1
      {1, 1, 3, 1, 1, 50, 1, 1, true, false},        // one channel
      {200, 16, 3, 1, 1, 70, 1, 1, false, true},     // wide input, narrow output
  };
  uint64_t seed = 11;
  for (const Case& c : cases) check(c, seed += 10);
}

}  // namespace
}  // namespace meshnn::kernels
