// Winograd 1-D convolution against the float64 scalar reference: the transform matrices' identity,
// every (channels, K, dilation) the released vocoder / BWE / BigVGAN v2 configs use, odd lengths,
// causal and asymmetric pads, inputs shorter than a tile, accumulate, and a survey of the
// per-tile error that chose default_winograd_tile (printed; docs/precision.md quotes it).
#include "kernels/winograd1d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/conv1d_direct.h"
#include "meshnn/core/error.h"

namespace meshnn::kernels {
namespace {

constexpr double kContract = 3e-6;  // relative L2 per layer, f32 (docs/precision.md)

std::vector<float> uniform(size_t n, uint64_t seed, float scale = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct Case {
  int64_t ci, co, k, dil, T, pad_l, pad_r;
  bool bias = true, accumulate = false;
};

// Relative L2 error of the Winograd result against float64 (bias and old dst included).
double rel_error(const Case& c, WinogradTile tile, uint64_t seed) {
  // Weights at PyTorch's init scale, so the output is O(1) like the input.
  const float ws = 1.f / std::sqrt(static_cast<float>(c.ci * c.k));
  const std::vector<float> w = uniform(static_cast<size_t>(c.co * c.ci * c.k), seed, ws);
  const std::vector<float> b = uniform(static_cast<size_t>(c.co), seed + 1, 0.1f);
  const std::vector<float> x = uniform(static_cast<size_t>(c.T * c.ci), seed + 2);
  const int64_t T_out = c.T + c.pad_l + c.pad_r - (c.k - 1) * c.dil;
  if (T_out <= 0) return 0;
  const std::vector<float> y0 = uniform(static_cast<size_t>(T_out * c.co), seed + 3);
  std::vector<float> got = y0, want = y0;
  Winograd1d wg(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci, c.k, c.dil, tile);
  wg.run(x.data(), c.T, c.pad_l, got.data(), T_out, c.accumulate);
  direct_conv1d_reference(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci, c.k, 1, c.dil,
                          x.data(), c.T, c.pad_l, want.data(), T_out, c.accumulate);
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = static_cast<double>(got[i]) - want[i];
    num += e * e;
    den += static_cast<double>(want[i]) * want[i];
  }
  return std::sqrt(num / den);
}

std::string describe(const Case& c, WinogradTile t) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "F(%d,%d) ci=%ld co=%ld k=%ld d=%ld T=%ld l=%ld r=%ld acc=%d", t.m,
                t.r, long(c.ci), long(c.co), long(c.k), long(c.dil), long(c.T), long(c.pad_l),
                long(c.pad_r), int(c.accumulate));
  return buf;
}

TEST(Winograd1d, MatricesReproduceTheCorrelation) {
  // Exact arithmetic check in float64: atᵀ[(g·w) ⊙ (bt·x)] = Σ_j x[u + j] w[j].
  for (auto [m, r] : {std::pair{2, 3}, {4, 3}, {6, 3}, {4, 4}, {2, 7}, {4, 7}, {6, 6}}) {
    const WinogradMatrices wm = winograd_matrices(m, r);
    const int a = wm.alpha;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x(a), w(r);
    for (double& v : x) v = u(rng);
    for (double& v : w) v = u(rng);
    std::vector<double> prod(a);
    for (int xi = 0; xi < a; ++xi) {
      double gx = 0, bx = 0;
      for (int j = 0; j < r; ++j) gx += wm.g[xi * r + j] * w[j];
      for (int j = 0; j < a; ++j) bx += wm.bt[xi * a + j] * x[j];
      prod[xi] = gx * bx;
    }
    for (int o = 0; o < m; ++o) {
      double got = 0, want = 0;
      for (int xi = 0; xi < a; ++xi) got += wm.at[o * a + xi] * prod[xi];
      for (int j = 0; j < r; ++j) want += x[o + j] * w[j];
      EXPECT_NEAR(got, want, 1e-9) << "F(" << m << "," << r << ") output " << o;
    }
  }
}

TEST(Winograd1d, EveryReleasedShapeWithinContract) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  // (C_in, C_out) of the released configs: LTX-2.3 vocoder and BigVGAN v2 (1536 → 24 by halves,
  // conv_pre from 128 / 100 mels), LTX-2.3 BWE (512 → 16, conv_pre from 64 mels), conv_post.
  const std::pair<int64_t, int64_t> chans[] = {{768, 768}, {384, 384}, {192, 192}, {96, 96},
                                               {48, 48},   {24, 24},   {256, 256}, {128, 128},
                                               {64, 64},   {32, 32},   {16, 16}};
  uint64_t seed = 100;
  double worst = 0;
  for (auto [ci, co] : chans)
    for (int64_t k : {3, 7, 11})
      for (int64_t d : {1, 3, 5}) {
        // "same" padding, odd length, enough rows for several tiles in every phase.
        const Case c{ci, co, k, d, 29 + 2 * (k - 1) * d, (k - 1) * d / 2, (k - 1) * d / 2};
        const WinogradTile t = default_winograd_tile(k);
        const double e = rel_error(c, t, seed += 10);
        worst = std::max(worst, e);
        EXPECT_LE(e, kContract) << describe(c, t);
      }
  // conv_pre (mels → 1536 / 512) and conv_post (24 / 16 → 2, k = 7).
  for (const Case& c : {Case{128, 1536, 7, 1, 47, 3, 3}, Case{100, 1536, 7, 1, 47, 3, 3},
                        Case{64, 512, 7, 1, 47, 3, 3}, Case{24, 2, 7, 1, 301, 3, 3},
                        Case{16, 2, 7, 1, 301, 3, 3, false}}) {
    const double e = rel_error(c, default_winograd_tile(c.k), seed += 10);
    worst = std::max(worst, e);
    EXPECT_LE(e, kContract) << describe(c, default_winograd_tile(c.k));
  }
  std::printf("worst relative L2 over the released shapes: %.2e\n", worst);
}

TEST(Winograd1d, EdgesPadsAndAccumulate) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  const Case cases[] = {
      {24, 24, 7, 3, 1001, 18, 0, true, false},  // causal: all padding in front
      {48, 40, 11, 5, 333, 7, 43, true, true},   // asymmetric pads, accumulate, C_out % 8 ≠ 0
      {13, 21, 3, 1, 5, 1, 1, true, false},      // T shorter than one tile
      {96, 96, 7, 3, 4, 9, 9, false, true},      // T shorter than the reach
      {8, 8, 11, 5, 200, 0, 0, true, false},     // valid conv on an input carrying its halo
      {32, 16, 3, 1, 77, 2, 0, true, true},      // pads larger than needed on one side
      {7, 9, 4, 2, 90, 3, 3, true, false},       // K = 4 (segment exactly one tile)
      {1, 1, 11, 5, 123, 25, 25, true, false},   // one channel
      {20, 44, 5, 2, 301, 4, 4, true, false},    // K = 5: two segments, the second zero-padded
  };
  uint64_t seed = 7;
  for (const Case& c : cases) {
    const WinogradTile t = default_winograd_tile(c.k);
    EXPECT_LE(rel_error(c, t, seed += 10), kContract) << describe(c, t);
  }
}

TEST(Winograd1d, RejectsTilesThatDoNotFit) {
  const std::vector<float> w(2 * 2 * 7, 0.5f);
  EXPECT_THROW(Winograd1d(w.data(), nullptr, 2, 2, 7, 1, WinogradTile{4, 3}), InvalidArgument);
  EXPECT_THROW(Winograd1d(w.data(), nullptr, 2, 2, 7, 1, WinogradTile{12, 12}), InvalidArgument);
  EXPECT_THROW(Winograd1d(w.data(), nullptr, 0, 2, 7, 1, WinogradTile{4, 4}), InvalidArgument);
}

// The survey behind default_winograd_tile: error of each candidate tile at C = 384 / 96 (printed
// for docs/precision.md). Asserts nothing beyond "finite": the choice is asserted above.
TEST(Winograd1d, TileErrorSurvey) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  struct Cand {
    int64_t k;
    WinogradTile t;
  };
  const Cand cands[] = {{3, {2, 3}},   {3, {4, 3}},  {3, {6, 3}},  {3, {4, 4}},  {3, {6, 6}},
                        {7, {2, 7}},   {7, {3, 3}},  {7, {4, 4}},  {7, {4, 7}},  {7, {6, 6}},
                        {11, {2, 11}}, {11, {3, 3}}, {11, {4, 4}}, {11, {5, 5}}, {11, {6, 6}}};
  for (int64_t c : {384, 96})
    for (const Cand& cd : cands) {
      const int64_t d = 3;
      const Case cs{c, c, cd.k, d, 61 + 2 * (cd.k - 1) * d, (cd.k - 1) * d / 2, (cd.k - 1) * d / 2};
      double worst = 0;
      for (uint64_t s = 0; s < 2; ++s) worst = std::max(worst, rel_error(cs, cd.t, 1000 + s * 17));
      Winograd1d probe(std::vector<float>(c * c * cd.k, 0.f).data(), nullptr, c, c, cd.k, d, cd.t);
      std::printf("C=%4ld K=%2ld F(%d,%2d) alpha=%2d  flop ratio %.2fx  rel L2 %.2e\n", long(c),
                  long(cd.k), cd.t.m, cd.t.r, cd.t.alpha(), probe.flop_ratio(), worst);
      EXPECT_TRUE(std::isfinite(worst));
    }
}

}  // namespace
}  // namespace meshnn::kernels
