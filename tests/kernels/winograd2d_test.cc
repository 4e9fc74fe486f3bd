// Winograd F(2×2, 3×3) Conv2d against a float64 scalar reference over the mel-VAE decoder's 3×3
// shapes (LTX-2.3: channels 8 → 512 → 256 → 128 → 2 at mel widths 16, 32, 64), with the causal
// pads (2 rows on top, 1 column each side), the valid-in-time form a time shard uses, odd sizes,
// accumulate and no bias. Contract: relative L2 ≤ 3e-6 per layer in f32.
#include "kernels/winograd2d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace meshnn::kernels {
namespace {

constexpr double kContract = 3e-6;

std::vector<float> uniform(size_t n, uint64_t seed, float scale = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct Case {
  int64_t ci, co, H, W, pad_t, pad_b, pad_l, pad_r;
  bool bias = true, accumulate = false;
};

double rel_error(const Case& c, uint64_t seed) {
  const float ws = 1.f / std::sqrt(static_cast<float>(c.ci * 9));
  const std::vector<float> w = uniform(static_cast<size_t>(c.co * c.ci * 9), seed, ws);
  const std::vector<float> b = uniform(static_cast<size_t>(c.co), seed + 1, 0.1f);
  const std::vector<float> x = uniform(static_cast<size_t>(c.H * c.W * c.ci), seed + 2);
  const int64_t Ho = c.H + c.pad_t + c.pad_b - 2, Wo = c.W + c.pad_l + c.pad_r - 2;
  const std::vector<float> y0 = uniform(static_cast<size_t>(Ho * Wo * c.co), seed + 3);
  std::vector<float> got = y0;
  Winograd2d wg(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci);
  wg.run(x.data(), c.H, c.W, c.pad_t, c.pad_l, got.data(), Ho, Wo, c.accumulate);
  double num = 0, den = 0;
  for (int64_t i = 0; i < Ho; ++i)
    for (int64_t j = 0; j < Wo; ++j)
      for (int64_t o = 0; o < c.co; ++o) {
        double acc = c.bias ? b[o] : 0.0;
        for (int a = 0; a < 3; ++a)
          for (int bb = 0; bb < 3; ++bb) {
            const int64_t r = i + a - c.pad_t, q = j + bb - c.pad_l;
            if (r < 0 || r >= c.H || q < 0 || q >= c.W) continue;
            const float* xp = x.data() + (r * c.W + q) * c.ci;
            const float* wp = w.data() + o * c.ci * 9 + a * 3 + bb;
            for (int64_t ch = 0; ch < c.ci; ++ch) acc += static_cast<double>(xp[ch]) * wp[ch * 9];
          }
        const size_t idx = static_cast<size_t>((i * Wo + j) * c.co + o);
        if (c.accumulate) acc += y0[idx];
        const double e = got[idx] - acc;
        num += e * e;
        den += acc * acc;
      }
  return std::sqrt(num / den);
}

TEST(Winograd2d, MelVaeShapesWithinContract) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  const std::vector<Case> cases = {
      {8, 512, 13, 16, 2, 0, 1, 1},   // conv_in (causal in time)
      {512, 512, 7, 16, 2, 0, 1, 1},  // level-2 resblocks
      {512, 512, 9, 32, 0, 0, 1, 1},  // upsample conv, valid in time (a shard with its halo)
      {512, 256, 9, 32, 2, 0, 1, 1},  // level-1 first resblock conv
      {256, 256, 15, 32, 2, 0, 1, 1}, {256, 128, 17, 64, 2, 0, 1, 1},  // level-0
      {128, 128, 25, 64, 2, 0, 1, 1}, {128, 2, 49, 64, 2, 0, 1, 1},    // conv_out
  };
  uint64_t seed = 100;
  for (const Case& c : cases) {
    const double e = rel_error(c, seed += 10);
    std::printf("winograd2d F(2x2,3x3) %lld->%lld H%lld W%lld: rel L2 %.2e\n",
                static_cast<long long>(c.ci), static_cast<long long>(c.co),
                static_cast<long long>(c.H), static_cast<long long>(c.W), e);
    EXPECT_LT(e, kContract) << c.ci << "->" << c.co;
  }
}

TEST(Winograd2d, OddSizesPadsAccumulateNoBias) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA";
  const std::vector<Case> cases = {
      {5, 7, 3, 3, 0, 0, 0, 0},                // one output
      {9, 11, 4, 5, 2, 0, 1, 1, false},        // odd width, no bias
      {16, 24, 7, 9, 1, 1, 1, 1, true, true},  // accumulate, symmetric pads
      {3, 13, 2, 2, 2, 0, 1, 1},               // input smaller than a tile
      {17, 9, 6, 1, 2, 0, 1, 1},               // width 1
      {12, 12, 11, 10, 0, 2, 2, 0},            // pads on the other sides
  };
  uint64_t seed = 7;
  for (const Case& c : cases) EXPECT_LT(rel_error(c, seed += 3), kContract) << c.ci << "->" << c.co;
}

}  // namespace
}  // namespace meshnn::kernels
