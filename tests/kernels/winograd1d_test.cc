// Winograd 1-D convolution against the float64 scalar reference: the transform matrices' identity,
// every (channels, K, dilation) the released vocoder / BWE / BigVGAN v2 configs use, odd lengths,
// causal and asymmetric pads, inputs shorter than a tile, accumulate, and a survey of the
// per-tile error that chose default_winograd_tile (printed; docs/precision.md quotes it).
#include "kernels/winograd1d.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/conv1d_direct.h"
#include "kernels/conv1d_ref.h"
#include "kernels/packed_gemm.h"
#include "meshnn/core/bf16.h"
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
double rel_error(const Case& c, WinogradTile tile, uint64_t seed,
                 WinogradPrecision prec = WinogradPrecision::f32,
                 WinogradIsa isa = WinogradIsa::automatic) {
  // Weights at PyTorch's init scale, so the output is O(1) like the input.
  const float ws = 1.f / std::sqrt(static_cast<float>(c.ci * c.k));
  const std::vector<float> w = uniform(static_cast<size_t>(c.co * c.ci * c.k), seed, ws);
  const std::vector<float> b = uniform(static_cast<size_t>(c.co), seed + 1, 0.1f);
  const std::vector<float> x = uniform(static_cast<size_t>(c.T * c.ci), seed + 2);
  const int64_t T_out = c.T + c.pad_l + c.pad_r - (c.k - 1) * c.dil;
  if (T_out <= 0) return 0;
  const std::vector<float> y0 = uniform(static_cast<size_t>(T_out * c.co), seed + 3);
  std::vector<float> got = y0, want = y0;
  Winograd1d wg(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci, c.k, c.dil, tile, prec, isa);
  wg.run(x.data(), c.T, c.pad_l, got.data(), T_out, c.accumulate);
  test::direct_conv1d_reference(w.data(), c.bias ? b.data() : nullptr, c.co, c.ci, c.k, 1, c.dil,
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

// The AVX2 path (dnnl_sgemm on unpacked filters) that CPUs without AVX-512 run, forced here.
TEST(Winograd1d, Avx2PathWithinContract) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  uint64_t seed = 300;
  for (const Case& c : {Case{768, 768, 7, 3, 95, 9, 9}, Case{48, 40, 11, 5, 333, 7, 43, true, true},
                        Case{96, 96, 3, 1, 40, 1, 1, false, true}}) {
    const WinogradTile t = default_winograd_tile(c.k);
    EXPECT_LE(rel_error(c, t, seed += 10, WinogradPrecision::f32, WinogradIsa::avx2), kContract)
        << describe(c, t);
  }
}

// f32 short inputs on wide layers (streaming pushes) take the short path (all dilation phases
// stacked into one packed GEMM per transform point, columns split over the threads): one instance
// over several lengths (odd and tiny ones, T not a multiple of d, phases with fewer rows), with and
// without bias, accumulate, every kernel size of the BigVGAN blocks and dilations 1 to 5, against
// float64 within the contract; a long input on the same instance takes dnnl_sgemm again.
TEST(Winograd1d, ShortPathWithinContract) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  struct Layer {
    int64_t ci, co, k, dil;
    bool bias;
  };
  uint64_t seed = 900;
  for (const Layer& L :
       {Layer{96, 768, 7, 1, true}, Layer{64, 520, 11, 5, false}, Layer{40, 512, 3, 3, true},
        Layer{24, 300, 7, 2, true}, Layer{33, 256, 11, 4, false}}) {
    const WinogradTile tile = default_winograd_tile(L.k);
    const float ws = 1.f / std::sqrt(static_cast<float>(L.ci * L.k));
    const std::vector<float> w = uniform(static_cast<size_t>(L.co * L.ci * L.k), seed++, ws);
    const std::vector<float> b = uniform(static_cast<size_t>(L.co), seed++, 0.1f);
    const Winograd1d wg(w.data(), L.bias ? b.data() : nullptr, L.co, L.ci, L.k, L.dil, tile);
    const Winograd1d sg(w.data(), L.bias ? b.data() : nullptr, L.co, L.ci, L.k, L.dil, tile,
                        WinogradPrecision::f32, WinogradIsa::avx2);
    const int64_t pad = (L.k - 1) * L.dil / 2;
    for (const int64_t T : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{31}, int64_t{64},
                            int64_t{127}, int64_t{17}, int64_t{2000}})
      for (const bool acc : {false, true}) {
        const int64_t T_out = T;  // same padding on both sides
        const std::vector<float> x = uniform(static_cast<size_t>(T * L.ci), seed++);
        const std::vector<float> y0 = uniform(static_cast<size_t>(T_out * L.co), seed++);
        std::vector<float> got = y0, want = y0;
        const int64_t n_t = ((T + L.dil - 1) / L.dil + tile.m - 1) / tile.m;
        const int64_t segs = (L.k + tile.r - 1) / tile.r;
        const bool short_in =
            L.dil * (n_t + segs - 1) <= (L.dil == 1 ? kShortMaxRowsUndilated : kShortMaxRows);
        EXPECT_EQ(wg.uses_short_path(T_out), short_in) << "T=" << T << " d=" << L.dil;
        EXPECT_FALSE(sg.uses_short_path(T_out));
        wg.run(x.data(), T, pad, got.data(), T_out, acc);
        test::direct_conv1d_reference(w.data(), L.bias ? b.data() : nullptr, L.co, L.ci, L.k, 1,
                                      L.dil, x.data(), T, pad, want.data(), T_out, acc);
        double num = 0, den = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          const double e = static_cast<double>(got[i]) - want[i];
          num += e * e;
          den += static_cast<double>(want[i]) * want[i];
        }
        EXPECT_LE(std::sqrt(num / den), kContract)
            << "ci=" << L.ci << " co=" << L.co << " k=" << L.k << " d=" << L.dil << " T=" << T
            << " acc=" << acc;
      }
  }
  // Narrow layers and bf16 never take it.
  const std::vector<float> w = uniform(size_t{64} * 64 * 7, 5, 0.05f);
  EXPECT_FALSE(
      Winograd1d(w.data(), nullptr, 64, 64, 7, 1, default_winograd_tile(7)).uses_short_path(16));
  const std::vector<float> wb = uniform(size_t{512} * 8 * 7, 6, 0.05f);
  EXPECT_FALSE(Winograd1d(wb.data(), nullptr, 512, 8, 7, 1,
                          default_winograd_tile(7, WinogradPrecision::bf16),
                          WinogradPrecision::bf16)
                   .uses_short_path(16));
}

// bf16 GEMM operands: the transformed input V = Bᵀx and filter U = G·w are each rounded to bf16
// once (relative error ≤ 2⁻⁹ each, RMS ≈ 2⁻⁹/√3), products exact, f32 sums. Per product that is
// the direct bf16 algorithm's error (docs/precision.md measures 2.2e-3 relative L2), but the
// output transform sums α rounded products with weights at[u][ξ] whose products can be larger
// than the outputs: for iid operands the relative L2 grows by
//   κ = sqrt(Σ_u Σ_ξ at[u][ξ]²·‖bt[ξ]‖²·‖g[ξ]‖² / (m·r))
// (F(2,3) 1.29, F(4,4) 3.99, F(6,3) 4.54; computed below from the matrices). The bound asserted
// is 1.5 × 2.2e-3 × κ (the 1.5 covers the operands' distribution and the f32 sums); the tests
// print the measured error next to it. Run on the native path (vdpbf16ps) when the CPU has it
// and on the exact emulation (bf16 values in f32, the path of CPUs without AVX512-BF16) always.
double bf16_kappa(WinogradTile t) {
  const WinogradMatrices wm = winograd_matrices(t.m, t.r);
  const int a = wm.alpha;
  double num = 0;
  for (int xi = 0; xi < a; ++xi) {
    double nb = 0, ng = 0;
    for (int j = 0; j < a; ++j) nb += wm.bt[xi * a + j] * wm.bt[xi * a + j];
    for (int j = 0; j < t.r; ++j) ng += wm.g[xi * t.r + j] * wm.g[xi * t.r + j];
    for (int u = 0; u < t.m; ++u) num += wm.at[u * a + xi] * wm.at[u * a + xi] * nb * ng;
  }
  return std::sqrt(num / (t.m * t.r));
}

TEST(Winograd1d, Bf16WithinDerivedBound) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  std::vector<WinogradIsa> isas{WinogradIsa::avx2};
  if (packed_gemm_available(GemmType::bf16)) isas.push_back(WinogradIsa::automatic);
  uint64_t seed = 500;
  for (const Case& c :
       {Case{768, 768, 7, 3, 95, 9, 9}, Case{384, 384, 3, 5, 61, 5, 5},
        Case{96, 96, 11, 1, 101, 5, 5}, Case{48, 40, 11, 5, 333, 7, 43, true, true},
        Case{13, 21, 3, 1, 5, 1, 1}, Case{7, 9, 4, 2, 90, 3, 3}, Case{64, 512, 7, 1, 47, 3, 3}})
    for (WinogradIsa isa : isas) {
      const WinogradTile t = default_winograd_tile(c.k, WinogradPrecision::bf16);
      const double bound = 1.5 * 2.2e-3 * bf16_kappa(t);
      const double e = rel_error(c, t, seed += 10, WinogradPrecision::bf16, isa);
      std::printf("bf16 %-60s %s  rel L2 %.2e  bound %.2e\n", describe(c, t).c_str(),
                  isa == WinogradIsa::avx2 ? "emulated" : "packed", e, bound);
      EXPECT_LE(e, bound) << describe(c, t);
      EXPECT_GT(e, 1e-5) << "bf16 rounding should show: " << describe(c, t);
    }
}

// The native and the emulated bf16 paths compute the same products of the same rounded operands;
// only the f32 summation order differs, so they agree far inside the bf16 error.
TEST(Winograd1d, Bf16NativeMatchesEmulation) {
  if (!packed_gemm_available(GemmType::bf16)) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  const int64_t ci = 192, co = 96, k = 7, d = 3, T = 200, pad = 9;
  const std::vector<float> w = uniform(co * ci * k, 61, 1.f / std::sqrt(float(ci * k)));
  const std::vector<float> x = uniform(T * ci, 62);
  const WinogradTile t = default_winograd_tile(k, WinogradPrecision::bf16);
  Winograd1d nat(w.data(), nullptr, co, ci, k, d, t, WinogradPrecision::bf16);
  Winograd1d emu(w.data(), nullptr, co, ci, k, d, t, WinogradPrecision::bf16, WinogradIsa::avx2);
  EXPECT_STREQ(nat.gemm_label(), "packed-bf16");
  EXPECT_STREQ(emu.gemm_label(), "sgemm-bf16emu");
  const int64_t T_out = T + 2 * pad - (k - 1) * d;
  std::vector<float> a(T_out * co), b(T_out * co);
  nat.run(x.data(), T, pad, a.data(), T_out, false);
  emu.run(x.data(), T, pad, b.data(), T_out, false);
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  EXPECT_LT(std::sqrt(num / den), 1e-5);
}

// Every micro-kernel (f32 AVX-512 and AVX2, bf16) on packed B and on f32 row-major views of B
// (row stride past N, ragged last panel), row counts around their blockings (6, 12), K across
// chunks (256 f32, 512 bf16), a column range, accumulate, and rows gathered out of order (a_rows),
// against float64.
TEST(PackedGemm, MatchesFloat64) {
  struct Path {
    GemmType type;
    GemmIsa isa;
    bool view;
  };
  for (const Path path :
       {Path{GemmType::f32, GemmIsa::best, false}, Path{GemmType::f32, GemmIsa::avx2, false},
        Path{GemmType::f32, GemmIsa::best, true}, Path{GemmType::f32, GemmIsa::avx2, true},
        Path{GemmType::bf16, GemmIsa::best, false}}) {
    const GemmType type = path.type;
    if (!packed_gemm_available(type)) continue;
    for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                           {13, 37, 40},
                           {25, 515, 96},
                           {12, 1024, 33},
                           {7, 3, 70},
                           {6, 300, 24},
                           // A past the whole-A limit (at most 1 MiB): the chunked loop.
                           {120, 2304, 40}})
      for (const bool gather : {false, true}) {
        // Gathered: A has 2M + 3 rows; row i of the product is A's row (2M + 2 − 2i).
        const int64_t a_count = gather ? 2 * M + 3 : M;
        const int64_t ldb = N + 3;  // B's rows padded: the view must honour the row stride
        const std::vector<float> a = uniform(a_count * K, 71 + K), bm = uniform(K * ldb, 72 + N);
        std::vector<int64_t> rows(static_cast<size_t>(M));
        for (int64_t i = 0; i < M; ++i) rows[i] = (gather ? 2 * M + 2 - 2 * i : i) * K;
        const std::vector<float> c0 = uniform(M * N, 73);
        const PackedMatrix pb = path.view ? PackedMatrix::row_major_view(bm.data(), K, N, ldb)
                                          : PackedMatrix(bm.data(), K, N, ldb, type);
        std::vector<uint16_t> a16(a.size());
        convert_to_bf16(a.data(), int64_t(a.size()), a16.data());
        for (bool acc : {false, true})
          for (int64_t n0 : {int64_t{0}, int64_t{32}}) {
            if (n0 >= N) continue;
            std::vector<float> c = c0;
            packed_gemm(pb, M,
                        type == GemmType::f32 ? static_cast<const void*>(a.data()) : a16.data(), K,
                        c.data(), N, n0, N, acc, gather ? rows.data() : nullptr, path.isa);
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < N; ++j) {
                const float got = c[i * N + j];
                if (j < n0) {
                  EXPECT_EQ(got, c0[i * N + j]);  // columns outside the range untouched
                  continue;
                }
                double want = acc ? c0[i * N + j] : 0.0, mag = std::abs(want);
                for (int64_t q = 0; q < K; ++q) {
                  const float ae = a[rows[i] + q];
                  const double av = type == GemmType::f32 ? ae : round_to_bf16(ae);
                  const float be = bm[q * ldb + j];
                  const double bv = type == GemmType::f32 ? be : round_to_bf16(be);
                  want += av * bv;
                  mag += std::abs(av * bv);
                }
                // Exact products, f32 sums: |error| ≤ K·2⁻²⁴·Σ|terms| (a loose form of the bound).
                EXPECT_NEAR(got, want, 1e-7 * double(K + 2) * mag + 1e-30)
                    << int(type) << " isa " << int(path.isa) << " view " << path.view << " M=" << M
                    << " K=" << K << " N=" << N << " gather " << gather << " (" << i << "," << j
                    << ")";
              }
          }
      }
  }
}

// The two f32 micro-kernels do the same operations in the same order, on a packed B or a view of
// it: the same bits.
TEST(PackedGemm, Avx2AndAvx512AndViewsGiveTheSameBits) {
  if (!packed_gemm_available(GemmType::f32)) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  const int64_t M = 17, K = 700, N = 100;
  const std::vector<float> a = uniform(M * K, 81), bm = uniform(K * N, 82);
  const PackedMatrix pb(bm.data(), K, N, N, GemmType::f32);
  const PackedMatrix view = PackedMatrix::row_major_view(bm.data(), K, N, N);
  EXPECT_TRUE(view.is_view());
  EXPECT_EQ(view.bytes(), 0u);
  std::vector<float> best(M * N), avx2(M * N), view_best(M * N), view_avx2(M * N);
  packed_gemm(pb, M, a.data(), K, best.data(), N, 0, N, false, nullptr, GemmIsa::best);
  packed_gemm(pb, M, a.data(), K, avx2.data(), N, 0, N, false, nullptr, GemmIsa::avx2);
  packed_gemm(view, M, a.data(), K, view_best.data(), N, 0, N, false, nullptr, GemmIsa::best);
  packed_gemm(view, M, a.data(), K, view_avx2.data(), N, 0, N, false, nullptr, GemmIsa::avx2);
  EXPECT_EQ(best, avx2);
  EXPECT_EQ(best, view_best);
  EXPECT_EQ(best, view_avx2);
}

// Packing a bf16 B 16 values at a time (AVX-512F) and one at a time give the same bytes: the
// rounding (nearest even, ties both ways, NaN quietened, infinities, subnormals) and the layout of
// a ragged last panel (N = 45) and an odd K (the last pair's upper half zero).
TEST(PackedGemm, Bf16PackingPathsGiveTheSameBytes) {
  const int64_t K = 37, N = 45, ldb = 50;
  std::vector<float> bm = uniform(K * ldb, 91);
  const uint32_t specials[] = {0x7fc00001u, 0xffa00000u, 0x7f800000u, 0xff800000u, 0x00000001u,
                               0x807fffffu, 0x3f808000u, 0x3f818000u, 0x7f7fffffu, 0xbf7fffffu};
  for (size_t i = 0; i < std::size(specials); ++i)
    std::memcpy(&bm[(3 * i + 1) * ldb + (7 * i) % N], &specials[i], sizeof(float));
  const PackedMatrix best(bm.data(), K, N, ldb, GemmType::bf16, GemmIsa::best);
  const PackedMatrix one(bm.data(), K, N, ldb, GemmType::bf16, GemmIsa::avx2);
  ASSERT_EQ(best.bytes(), one.bytes());
  EXPECT_EQ(std::memcmp(best.data(), one.data(), best.bytes()), 0);
  // And the value at (k, c) is to_bf16 of B's: the layout of packed_gemm.h.
  const auto* d = static_cast<const uint16_t*>(one.data());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < N; ++c) {
      const size_t at =
          (c / 32) * one.panel_stride() + (k / 2) * 64 + (c % 32 / 16) * 32 + (c % 16) * 2 + k % 2;
      ASSERT_EQ(d[at], to_bf16(bm[k * ldb + c]).bits) << k << "," << c;
    }
}

// The filter transform: every ISA path gives the same bits (same fma per value, same order), and
// each value is the float64 sum rounded once. C_out not a multiple of 8 or 4 and C_in not a
// multiple of the channel block, so every lane form and the last partial block run.
TEST(Winograd1d, FilterTransformSameBitsOnEveryIsa) {
  const WinogradMatrices wm = winograd_matrices(4, 4);
  for (const auto& [co, ci, k] :
       {std::tuple<int64_t, int64_t, int64_t>{77, 37, 7}, {8, 16, 11}, {3, 5, 3}, {130, 19, 4}}) {
    const int64_t segs = (k + wm.r - 1) / wm.r;
    const std::vector<float> w = uniform(static_cast<size_t>(co * ci * k), 40 + k);
    const size_t n = static_cast<size_t>(wm.alpha * segs * ci * co);
    std::vector<float> best(n, -1.f), avx2(n, -2.f), scalar(n, -3.f);
    transform_filters(wm.g.data(), wm.alpha, wm.r, k, segs, w.data(), co, ci, best.data());
    transform_filters(wm.g.data(), wm.alpha, wm.r, k, segs, w.data(), co, ci, avx2.data(),
                      TransformIsa::avx2);
    transform_filters(wm.g.data(), wm.alpha, wm.r, k, segs, w.data(), co, ci, scalar.data(),
                      TransformIsa::scalar);
    EXPECT_EQ(0, std::memcmp(best.data(), avx2.data(), n * sizeof(float))) << co << " " << ci;
    EXPECT_EQ(0, std::memcmp(best.data(), scalar.data(), n * sizeof(float))) << co << " " << ci;
    double worst = 0;
    for (int xi = 0; xi < wm.alpha; ++xi)
      for (int64_t s = 0; s < segs; ++s)
        for (int64_t c = 0; c < ci; ++c)
          for (int64_t o = 0; o < co; ++o) {
            double want = 0;
            for (int j = 0; j < wm.r && s * wm.r + j < k; ++j)
              want += wm.g[xi * wm.r + j] * w[(o * ci + c) * k + s * wm.r + j];
            const float got = best[((xi * segs + s) * ci + c) * co + o];
            worst = std::max(worst, std::abs(got - want) / std::max(1.0, std::abs(want)));
          }
    EXPECT_LT(worst, 1.2e-7) << co << " " << ci << " "
                             << k;  // one f32 rounding (plus 1 ulp of f64)
  }
}

// B batch rows in one call (stream pushes stacked by StreamGroup): where the rows take the short
// path their tiles (every row, every phase) share the per-transform-point GEMMs, in blocks of up
// to kStackMaxRows tiles; every row must still be bit for bit what a call of that row alone gives
// (packed_gemm sums each row of C over K alone). Dilations 1, 3, 5, segmented long kernels,
// B = 1..9 (several blocks at the row limit), T tiny, mid and at the limit, a long T (rows one by
// one), accumulate; f32, and native bf16 where the CPU has it.
TEST(Winograd1d, BatchRowsBitIdenticalToEachRowAlone) {
  if (!winograd1d_available()) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  struct Layer {
    int64_t ci, co, k, dil;
  };
  struct Path {
    WinogradPrecision prec;
    WinogradIsa isa;
    const char* name;
  };
  // f32 (short path, and dnnl_sgemm past it), the bf16 emulation (dnnl_sgemm), native bf16.
  std::vector<Path> paths{{WinogradPrecision::f32, WinogradIsa::automatic, "f32"},
                          {WinogradPrecision::bf16, WinogradIsa::avx2, "bf16-emulated"}};
  if (packed_gemm_available(GemmType::bf16))
    paths.push_back({WinogradPrecision::bf16, WinogradIsa::automatic, "bf16"});
  uint64_t seed = 1300;
  for (const Path& path : paths)
    for (const Layer& L : {Layer{96, 768, 3, 1}, Layer{64, 512, 7, 3}, Layer{40, 520, 11, 5},
                           Layer{48, 300, 7, 1}, Layer{32, 256, 3, 5}}) {
      const WinogradTile tile = default_winograd_tile(L.k, path.prec);
      const float ws = 1.f / std::sqrt(static_cast<float>(L.ci * L.k));
      const std::vector<float> w = uniform(static_cast<size_t>(L.co * L.ci * L.k), seed++, ws);
      const std::vector<float> b = uniform(static_cast<size_t>(L.co), seed++, 0.1f);
      const Winograd1d wg(w.data(), b.data(), L.co, L.ci, L.k, L.dil, tile, path.prec, path.isa);
      const int64_t pad = (L.k - 1) * L.dil / 2;
      // The longest T whose rows take the short path (T_out = T here), or 40 where none does.
      int64_t limit = 0;
      while (wg.uses_short_path(limit + 1, 2)) ++limit;
      const bool has_short = limit > 0;
      if (!has_short) limit = 40;
      for (const int64_t T :
           {int64_t{1}, int64_t{7}, (limit + 1) / 2, limit, limit + 1, int64_t{300}, int64_t{1500}})
        for (const int64_t B : {1, 2, 3, 5, 8, 9}) {
          const bool acc = (T + B) % 2 == 1;
          const std::vector<float> x = uniform(static_cast<size_t>(B * T * L.ci), seed++);
          const std::vector<float> y0 = uniform(static_cast<size_t>(B * T * L.co), seed++);
          std::vector<float> got = y0, want = y0;
          const bool stacks_short =
              has_short && T <= limit && (B >= 2 || path.prec == WinogradPrecision::f32);
          EXPECT_EQ(wg.uses_short_path(T, B), stacks_short) << path.name << " T=" << T;
          wg.run(x.data(), B, T, pad, got.data(), T, acc);
          for (int64_t r = 0; r < B; ++r)
            wg.run(x.data() + r * T * L.ci, T, pad, want.data() + r * T * L.co, T, acc);
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
              << path.name << " ci=" << L.ci << " co=" << L.co << " k=" << L.k << " d=" << L.dil
              << " T=" << T << " B=" << B << " acc=" << acc << " short=" << stacks_short
              << " sgemm-stacked=" << wg.uses_stacked_sgemm(T, B);
        }
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
      std::printf("C=%4ld K=%2ld F(%d,%2d) alpha=%2d  rel L2 %.2e\n", long(c), long(cd.k), cd.t.m,
                  cd.t.r, cd.t.alpha(), worst);
      EXPECT_TRUE(std::isfinite(worst));
    }
}

}  // namespace
}  // namespace meshnn::kernels
