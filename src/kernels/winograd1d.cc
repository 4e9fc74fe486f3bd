#include "kernels/winograd1d.h"

#include <immintrin.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

#include "kernels/filter_cache.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"
#include "meshnn/core/tensor.h"

namespace meshnn::kernels {

namespace {

constexpr int kMaxAlpha = 12;
// Target bytes of one block's transformed inputs + products (see Winograd1d::run).
constexpr int64_t kBlockBytes = 1024 * 1024;

// Interpolation points in the order they are taken: small magnitudes and their reciprocals keep
// the Vandermonde system well conditioned (the powers stay near 1), ∞ is always added last.
constexpr double kPoints[] = {0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.25, -0.25, 4.0, -4.0};

// Inverse of an n × n row-major matrix (Gauss-Jordan, partial pivoting, float64).
std::vector<double> invert(std::vector<double> a, int n) {
  std::vector<double> inv(static_cast<size_t>(n * n), 0.0);
  for (int i = 0; i < n; ++i) inv[i * n + i] = 1.0;
  for (int col = 0; col < n; ++col) {
    int piv = col;
    for (int r = col + 1; r < n; ++r)
      if (std::abs(a[r * n + col]) > std::abs(a[piv * n + col])) piv = r;
    MESHNN_CHECK(a[piv * n + col] != 0.0, "winograd: singular interpolation matrix");
    for (int c = 0; c < n; ++c) {
      std::swap(a[col * n + c], a[piv * n + c]);
      std::swap(inv[col * n + c], inv[piv * n + c]);
    }
    const double p = a[col * n + col];
    for (int c = 0; c < n; ++c) a[col * n + c] /= p, inv[col * n + c] /= p;
    for (int r = 0; r < n; ++r) {
      if (r == col || a[r * n + col] == 0.0) continue;
      const double f = a[r * n + col];
      for (int c = 0; c < n; ++c)
        a[r * n + c] -= f * a[col * n + c], inv[r * n + c] -= f * inv[col * n + c];
    }
  }
  return inv;
}

__attribute__((target("avx2,fma"))) inline __m256i lane_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// One input tile: α rows (row0 + j·d, zeros outside [0, T)) of C channels → α transformed rows
// v[ξ·vstride + c] = Σ_j bt[ξ][j]·x[row_j][c].
template <int A>
__attribute__((target("avx2,fma"))) void input_tile(const float* bt, const float* x, int64_t T,
                                                    int64_t row0, int64_t d, int64_t C, float* v,
                                                    int64_t vstride) {
  const float* rows[A];
  for (int j = 0; j < A; ++j) {
    const int64_t r = row0 + j * d;
    rows[j] = r >= 0 && r < T ? x + r * C : nullptr;
  }
  for (int64_t c = 0; c < C; c += 8) {
    const int64_t n = std::min<int64_t>(8, C - c);
    const __m256i mask = lane_mask(n);
    __m256 in[A];
#pragma GCC unroll 12
    for (int j = 0; j < A; ++j)
      in[j] = rows[j] == nullptr ? _mm256_setzero_ps()
              : n == 8           ? _mm256_loadu_ps(rows[j] + c)
                                 : _mm256_maskload_ps(rows[j] + c, mask);
#pragma GCC unroll 12
    for (int xi = 0; xi < A; ++xi) {
      __m256 acc = _mm256_setzero_ps();
#pragma GCC unroll 12
      for (int j = 0; j < A; ++j) {
        const float b = bt[xi * A + j];
        if (b != 0.f) acc = _mm256_fmadd_ps(_mm256_set1_ps(b), in[j], acc);
      }
      if (n == 8)
        _mm256_storeu_ps(v + xi * vstride + c, acc);
      else
        _mm256_maskstore_ps(v + xi * vstride + c, mask, acc);
    }
  }
}

// One output tile: products mo[ξ·mstride + o] (o < C) → rows t0 + u·d (u < m, rows < T_out
// kept, row stride ystride) of y = Σ_ξ at[u][ξ]·mo[ξ] + bias (+ y when accumulating).
template <int A>
__attribute__((target("avx2,fma"))) void output_tile(const float* at, int m, const float* mo,
                                                     int64_t mstride, const float* bias, int64_t C,
                                                     float* y, int64_t ystride, int64_t t0,
                                                     int64_t d, int64_t T_out, bool accumulate) {
  int valid = 0;
  while (valid < m && t0 + valid * d < T_out) ++valid;
  for (int64_t o = 0; o < C; o += 8) {
    const int64_t n = std::min<int64_t>(8, C - o);
    const __m256i mask = lane_mask(n);
    __m256 p[A];
#pragma GCC unroll 12
    for (int xi = 0; xi < A; ++xi)
      p[xi] = n == 8 ? _mm256_loadu_ps(mo + xi * mstride + o)
                     : _mm256_maskload_ps(mo + xi * mstride + o, mask);
    const __m256 b = n == 8 ? _mm256_loadu_ps(bias + o) : _mm256_maskload_ps(bias + o, mask);
    for (int u = 0; u < valid; ++u) {
      __m256 acc = b;
#pragma GCC unroll 12
      for (int xi = 0; xi < A; ++xi) {
        const float a = at[u * A + xi];
        if (a != 0.f) acc = _mm256_fmadd_ps(_mm256_set1_ps(a), p[xi], acc);
      }
      float* yr = y + (t0 + u * d) * ystride + o;
      if (n == 8) {
        if (accumulate) acc = _mm256_add_ps(acc, _mm256_loadu_ps(yr));
        _mm256_storeu_ps(yr, acc);
      } else {
        if (accumulate) acc = _mm256_add_ps(acc, _mm256_maskload_ps(yr, mask));
        _mm256_maskstore_ps(yr, mask, acc);
      }
    }
  }
}

using InputFn = void (*)(const float*, const float*, int64_t, int64_t, int64_t, int64_t, float*,
                         int64_t);
using OutputFn = void (*)(const float*, int, const float*, int64_t, const float*, int64_t, float*,
                          int64_t, int64_t, int64_t, int64_t, bool);

template <int A>
constexpr InputFn input_fn() {
  return &input_tile<A>;
}
template <int A>
constexpr OutputFn output_fn() {
  return &output_tile<A>;
}

InputFn pick_input(int a) {
  static constexpr InputFn t[] = {nullptr,       nullptr,       input_fn<2>(),  input_fn<3>(),
                                  input_fn<4>(), input_fn<5>(), input_fn<6>(),  input_fn<7>(),
                                  input_fn<8>(), input_fn<9>(), input_fn<10>(), input_fn<11>(),
                                  input_fn<12>()};
  return t[a];
}
OutputFn pick_output(int a) {
  static constexpr OutputFn t[] = {nullptr,        nullptr,        output_fn<2>(),  output_fn<3>(),
                                   output_fn<4>(), output_fn<5>(), output_fn<6>(),  output_fn<7>(),
                                   output_fn<8>(), output_fn<9>(), output_fn<10>(), output_fn<11>(),
                                   output_fn<12>()};
  return t[a];
}

// Output tiles per block: the block's transformed inputs + products stay near kBlockBytes.
int64_t block_tiles(int a, int64_t c_in, int64_t c_out) {
  const int64_t per_tile = int64_t{a} * (c_in + c_out) * int64_t{sizeof(float)};
  return std::clamp<int64_t>(kBlockBytes / per_tile, 64, 256);
}

}  // namespace

WinogradScratch& winograd_scratch() {
  static thread_local WinogradScratch s;
  return s;
}

WinogradMatrices winograd_matrices(int m, int r) {
  const int a = m + r - 1;
  MESHNN_CHECK_AS(InvalidArgument, m >= 1 && r >= 1 && a >= 2 && a <= kMaxAlpha,
                  "winograd: unsupported tile F(", m, ", ", r, ") (alpha must be 2..", kMaxAlpha,
                  ")");
  WinogradMatrices w;
  w.m = m, w.r = r, w.alpha = a;
  const int nf = a - 1;  // finite points; the last row is the point at infinity
  w.points.assign(kPoints, kPoints + nf);
  std::vector<double> V(static_cast<size_t>(a * a), 0.0);
  for (int i = 0; i < nf; ++i)
    for (int c = 0; c < a; ++c) V[i * a + c] = std::pow(w.points[i], c);
  V[nf * a + (a - 1)] = 1.0;
  // Linear convolution s = h * x (h: r taps, x: m values) is s = V⁻¹[(G h) ⊙ (E x)]; its
  // transpose (the correlation a conv layer computes) is y = Eᵀ[(G h) ⊙ (V⁻ᵀ d)].
  const std::vector<double> vinv = invert(V, a);
  w.bt.resize(static_cast<size_t>(a * a));
  for (int xi = 0; xi < a; ++xi)
    for (int j = 0; j < a; ++j) w.bt[xi * a + j] = vinv[j * a + xi];
  w.g.assign(static_cast<size_t>(a * r), 0.0);
  w.at.assign(static_cast<size_t>(m * a), 0.0);
  for (int xi = 0; xi < nf; ++xi) {
    for (int j = 0; j < r; ++j) w.g[xi * r + j] = std::pow(w.points[xi], j);
    for (int u = 0; u < m; ++u) w.at[u * a + xi] = std::pow(w.points[xi], u);
  }
  w.g[nf * r + (r - 1)] = 1.0;
  w.at[(m - 1) * a + nf] = 1.0;
  return w;
}

WinogradTile default_winograd_tile(int64_t k, WinogradPrecision p) {
  // bf16 operands: the operand rounding (2.2e-3 relative L2 for the direct algorithm) grows by
  // the tile's κ (winograd1d_test.cc Bf16WithinDerivedBound): F(6,3) 4.5, F(4,4) 4.0, F(3,3)
  // 2.45. F(3,3) (α = 5, segmented for K > 3: K = 3 1.8×, K = 7 1.4×, K = 11 1.65× fewer
  // multiplies) keeps a layer within the bf16 bound of docs/precision.md (7e-3).
  if (p == WinogradPrecision::bf16) return {3, 3};
  // Measured relative L2 errors at C = 768 (winograd1d_test.cc, docs/precision.md): F(6,3)
  // 1.6e-6, F(4,4) 1.4e-6, within the 3e-6 contract; every α ≥ 9 tile measured above it
  // (F(5,5) 5e-6, F(4,7) 1.3e-5, F(6,6) 1.3e-5), so α ≤ 8 and long kernels go segmented.
  if (k == 3) return {6, 3};  // F(6,3): α = 8, 2.25× fewer multiplies
  return {4, 4};              // segmented F(4,4): α = 7; K = 7 → 2×, K = 11 → 2.1×
}

bool winograd1d_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma;
}

Winograd1d::Winograd1d(const float* weights, const float* bias, int64_t c_out, int64_t c_in,
                       int64_t k, int64_t dilation, WinogradTile tile, WinogradPrecision precision,
                       WinogradIsa isa)
    : c_in_(c_in), c_out_(c_out), k_(k), d_(dilation), tile_(tile), precision_(precision) {
  MESHNN_CHECK_AS(InvalidArgument, c_out > 0 && c_in > 0 && k > 0 && dilation > 0,
                  "winograd conv1d: bad geometry C_out=", c_out, " C_in=", c_in, " K=", k,
                  " dilation=", dilation);
  MESHNN_CHECK_AS(InvalidArgument, tile.r == k || tile.r == tile.m, "winograd conv1d: tile F(",
                  tile.m, ", ", tile.r, ") does not fit K = ", k,
                  " (r must equal K, or equal m for a segmented kernel)");
  const WinogradMatrices wm = winograd_matrices(tile.m, tile.r);
  const int a = wm.alpha, r = tile.r;
  segs_ = (k + r - 1) / r;
  bt_.assign(wm.bt.begin(), wm.bt.end());
  at_.assign(wm.at.begin(), wm.at.end());
  const bool bf16 = precision == WinogradPrecision::bf16;
  // The packed GEMM only for native bf16: its f32 form measured slower than dnnl_sgemm here
  // (docs/benchmarks.md), so f32 and the bf16 emulation keep dnnl_sgemm.
  native_bf16_ = bf16 && isa == WinogradIsa::automatic && packed_gemm_available(GemmType::bf16);
  packed_ = native_bf16_;
  // U[ξ][s][c][o] = Σ_j G[ξ][j]·w[o][c][s·r + j] in float64, one rounding to f32. Load time
  // matters (the big vocoder layers dominate it): parallel over input channels, each thread
  // gathers one channel's K taps as contiguous [tap][o] rows (no transposed copy of the whole
  // layer) and writes its part of U once (no zero fill: the first touch of U's pages is spread
  // over the threads), AVX2 doubles when the CPU has them. Storage and the filter cache:
  // winograd_filters.
  // Per transform point the S segments stack along K (segment s of output tile i reads input
  // tile i + s, i.e. the next C_in values of the same transformed row): one GEMM of depth S·C_in
  // against [s][C_in] × C_out.
  const int64_t kd = segs_ * c_in;
  filters_ = winograd_filters(
      a, kd, c_out, precision, packed_,
      [&](float* u) { transform_filters(wm.g.data(), a, r, k, segs_, weights, c_out, c_in, u); },
      [&] {
        return FilterKey("winograd1d")
            .add(tile.m)
            .add(tile.r)
            .add(k)
            .add(dilation)
            .add(c_in)
            .add(c_out)
            .add(static_cast<int64_t>(bf16) + static_cast<int64_t>(packed_))
            .add(weights, static_cast<size_t>(c_out * c_in * k))
            .value();
      },
      [&] {
        return detail::concat("winograd1d F(", tile.m, ",", tile.r, ") C_in ", c_in, " C_out ",
                              c_out, " K ", k, " dilation ", dilation,
                              packed_ ? " bf16 packed"
                              : bf16  ? " bf16 emulated"
                                      : " f32");
      });
  bias_.assign(static_cast<size_t>(c_out), 0.f);
  if (bias) std::copy(bias, bias + c_out, bias_.begin());
  // The short path reads u_ in place: per transform point a view of its (S·C_in) × C_out rows.
  if (!bf16 && isa == WinogradIsa::automatic && c_out >= kShortMinCols &&
      packed_gemm_available(GemmType::f32))
    for (int xi = 0; xi < a; ++xi)
      short_b_.push_back(PackedMatrix::row_major_view(filters_.u.data() + xi * segs_ * c_in * c_out,
                                                      segs_ * c_in, c_out, c_out));
  // The block scratch of a long input (Winograd1d::run), ready before the first call.
  const int64_t nb = block_tiles(a, c_in, c_out), vstride = (nb + segs_ - 1) * c_in;
  ProfileScope prof("load.winograd_scratch");
  reserve_winograd_scratch(static_cast<size_t>(a * (vstride + nb * c_out)),
                           native_bf16_ ? static_cast<size_t>(a * vstride) : 0);
}

bool Winograd1d::uses_short_path(int64_t T_out, int64_t B) const {
  if (T_out <= 0 || B <= 0) return false;
  // The input tiles of every phase, stacked: d·(n_t + S − 1) rows of transformed inputs per row.
  const int64_t n_t = ((T_out + d_ - 1) / d_ + tile_.m - 1) / tile_.m;
  const bool fits = d_ * (n_t + segs_ - 1) <= (d_ == 1 ? kShortMaxRowsUndilated : kShortMaxRows);
  // Native bf16 stacks only batches (B ≥ 2): a single row keeps its per-phase blocks (stacking
  // its phases was not measured).
  return fits && (!short_b_.empty() || (native_bf16_ && B >= 2));
}

const char* Winograd1d::gemm_label() const {
  if (native_bf16_) return "packed-bf16";
  const bool emu = precision_ == WinogradPrecision::bf16;
  if (packed_) return emu ? "packed-f32-bf16emu" : "packed-f32";
  return emu ? "sgemm-bf16emu" : "sgemm";
}

int64_t winograd_column_chunks(int64_t items, int64_t c_out, int threads) {
  if (items >= 2 * int64_t{threads}) return 1;
  const int64_t panels = (c_out + 31) / 32;
  const int64_t want = (2 * int64_t{threads} + items - 1) / items;
  return std::max<int64_t>(1, std::min(want, panels / 2));
}

namespace {

// One Winograd1d::run call: its input, output, geometry and the layer's transforms, read by each
// of its work items (the two functions below).
struct WinogradCall {
  const float* x = nullptr;
  int64_t B = 1, T = 0, pad_l = 0;
  float* y = nullptr;
  int64_t T_out = 0;
  bool accumulate = false;
  int a = 0, m = 0;
  int64_t d = 0, Ci = 0, Co = 0, S = 0, n_t = 0, nb = 0, blocks_per_phase = 0;
  int64_t vstride = 0, mstride = 0;  // per transform point, in v and in mo
  const float* bt = nullptr;
  const float* at = nullptr;
  const float* bias = nullptr;
  const float* u = nullptr;  // sgemm path: transformed filters [ξ][s][C_in][C_out]
  const std::vector<PackedMatrix>* pk = nullptr;
  InputFn in_fn = nullptr;
  OutputFn out_fn = nullptr;
  bool bf16 = false, native_bf16 = false, packed = false;
};

// The short path's block of segments [g0, g1) (segment g: batch row g / d, phase g % d), output
// columns [o0, o1): the segments' input tiles stacked in v (transformed when `transform`, else
// reused from the thread's previous item), one GEMM per transform point over all their tiles.
// Each tile's GEMM row is the same sum whatever rows surround it (packed_gemm sums each row of C
// over K alone), so every batch row gets the bits a call of that row alone gives.
void short_path_item(const WinogradCall& c, int64_t g0, int64_t g1, bool transform, float* v,
                     uint16_t* v16, float* mo, std::vector<int64_t>& a_rows, int64_t o0,
                     int64_t o1) {
  const int a = c.a, m = c.m;
  const int64_t d = c.d, Ci = c.Ci, Co = c.Co, S = c.S, n_t = c.n_t;
  const int64_t vstride = c.vstride, mstride = c.mstride;
  // Segment g's n_t + S − 1 input tiles at rows (g − g0)·(n_t + S − 1) of v; its output tile i
  // reads rows from (g − g0)·(n_t + S − 1) + i on (a_rows) and writes product row
  // (g − g0)·n_t + i.
  const int64_t in_rows = n_t + S - 1, n_seg = g1 - g0;
  if (transform) {
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t b = g / d, p = g % d;
      const float* xb = c.x + b * c.T * Ci;
      for (int64_t j = 0; j < in_rows; ++j)
        c.in_fn(c.bt, xb, c.T, p + d * j * m - c.pad_l, d, Ci, v + ((g - g0) * in_rows + j) * Ci,
                vstride);
    }
    if (c.native_bf16)
      for (int xi = 0; xi < a; ++xi)
        convert_to_bf16(v + xi * vstride, n_seg * in_rows * Ci, v16 + xi * vstride);
    a_rows.resize(static_cast<size_t>(n_seg * n_t));
    for (int64_t g = 0; g < n_seg; ++g)
      for (int64_t i = 0; i < n_t; ++i) a_rows[g * n_t + i] = (g * in_rows + i) * Ci;
  }
  for (int xi = 0; xi < a; ++xi) {
    const void* av = c.native_bf16 ? static_cast<const void*>(v16 + xi * vstride)
                                   : static_cast<const void*>(v + xi * vstride);
    packed_gemm((*c.pk)[static_cast<size_t>(xi)], n_seg * n_t, av, Ci, mo + xi * mstride, Co, o0,
                o1, false, a_rows.data());
  }
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t b = g / d, p = g % d;
    float* yb = c.y + b * c.T_out * Co;
    for (int64_t i = 0; i < n_t; ++i)
      c.out_fn(c.at, m, mo + ((g - g0) * n_t + i) * Co + o0, mstride, c.bias + o0, o1 - o0, yb + o0,
               Co, p + d * i * m, d, c.T_out, c.accumulate);
  }
}

// The dnnl_sgemm path's block of segments [g0, g1) (as in short_path_item), output columns
// [o0, o1): the segments' input tiles back to back in v, and per transform point and segment s one
// GEMM over all of them (row r reads v rows r + s, as block_item's rows do), so oneDNN packs the
// filters once per block rather than once per row. The S − 1 rows that straddle two segments are
// computed and dropped. A failed dnnl_sgemm leaves its status in `failed`.
void stacked_sgemm_item(const WinogradCall& c, int64_t g0, int64_t g1, bool transform, float* v,
                        float* mo, int64_t o0, int64_t o1, std::atomic<int>& failed) {
  const int a = c.a, m = c.m;
  const int64_t d = c.d, Ci = c.Ci, Co = c.Co, S = c.S, n_t = c.n_t;
  const int64_t vstride = c.vstride, mstride = c.mstride;
  const int64_t in_rows = n_t + S - 1, rows = (g1 - g0) * in_rows, M = rows - (S - 1);
  if (transform) {
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t b = g / d, p = g % d;
      const float* xb = c.x + b * c.T * Ci;
      for (int64_t j = 0; j < in_rows; ++j)
        c.in_fn(c.bt, xb, c.T, p + d * j * m - c.pad_l, d, Ci, v + ((g - g0) * in_rows + j) * Ci,
                vstride);
    }
    if (c.bf16)
      for (int xi = 0; xi < a; ++xi) round_to_bf16_inplace(v + xi * vstride, rows * Ci);
  }
  for (int xi = 0; xi < a; ++xi)
    for (int64_t s = 0; s < S; ++s) {
      const dnnl_status_t st = dnnl_sgemm('N', 'N', M, o1 - o0, Ci, 1.f, v + xi * vstride + s * Ci,
                                          Ci, c.u + (xi * S + s) * Ci * Co + o0, Co,
                                          s == 0 ? 0.f : 1.f, mo + xi * mstride + o0, Co);
      if (st != dnnl_success) failed.store(static_cast<int>(st), std::memory_order_relaxed);
    }
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t b = g / d, p = g % d;
    float* yb = c.y + b * c.T_out * Co;
    for (int64_t i = 0; i < n_t; ++i)
      c.out_fn(c.at, m, mo + ((g - g0) * in_rows + i) * Co + o0, mstride, c.bias + o0, o1 - o0,
               yb + o0, Co, p + d * i * m, d, c.T_out, c.accumulate);
  }
}

// Block blk (nb output tiles of one phase), output columns [o0, o1): its input tiles transformed
// into v (when `transform`, else reused), the GEMMs, the output transform. A failed dnnl_sgemm
// leaves its status in `failed` (exceptions cannot leave the parallel region).
void block_item(const WinogradCall& c, int64_t blk, bool transform, float* v, uint16_t* v16,
                float* mo, int64_t o0, int64_t o1, std::atomic<int>& failed) {
  const int a = c.a, m = c.m;
  const int64_t d = c.d, Ci = c.Ci, Co = c.Co, S = c.S, nb = c.nb;
  const int64_t vstride = c.vstride, mstride = c.mstride;
  const int64_t p = blk / c.blocks_per_phase, i0 = (blk % c.blocks_per_phase) * nb;
  const int64_t n = std::min(nb, c.n_t - i0);
  const int64_t rows = n + S - 1;
  if (transform) {
    for (int64_t j = 0; j < rows; ++j)
      c.in_fn(c.bt, c.x, c.T, p + d * (i0 + j) * m - c.pad_l, d, Ci, v + j * Ci, vstride);
    if (c.bf16)
      for (int xi = 0; xi < a; ++xi) {
        if (c.native_bf16)
          convert_to_bf16(v + xi * vstride, rows * Ci, v16 + xi * vstride);
        else
          round_to_bf16_inplace(v + xi * vstride, rows * Ci);
      }
  }
  for (int xi = 0; xi < a; ++xi) {
    if (c.packed) {
      // The S segments stacked along K: rows C_in apart, S·C_in long (read overlapping).
      const void* av = c.native_bf16 ? static_cast<const void*>(v16 + xi * vstride)
                                     : static_cast<const void*>(v + xi * vstride);
      packed_gemm((*c.pk)[static_cast<size_t>(xi)], n, av, Ci, mo + xi * mstride, Co, o0, o1,
                  false);
      continue;
    }
    for (int64_t s = 0; s < S; ++s) {
      const dnnl_status_t st = dnnl_sgemm('N', 'N', n, o1 - o0, Ci, 1.f, v + xi * vstride + s * Ci,
                                          Ci, c.u + (xi * S + s) * Ci * Co + o0, Co,
                                          s == 0 ? 0.f : 1.f, mo + xi * mstride + o0, Co);
      if (st != dnnl_success) failed.store(static_cast<int>(st), std::memory_order_relaxed);
    }
  }
  for (int64_t j = 0; j < n; ++j)
    c.out_fn(c.at, m, mo + j * Co + o0, mstride, c.bias + o0, o1 - o0, c.y + o0, Co,
             p + d * (i0 + j) * m, d, c.T_out, c.accumulate);
}

}  // namespace

void Winograd1d::run(const float* x, int64_t T, int64_t pad_l, float* y, int64_t T_out,
                     bool accumulate) const {
  run(x, 1, T, pad_l, y, T_out, accumulate);
}

void Winograd1d::run(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
                     bool accumulate) const {
  MESHNN_CHECK(winograd1d_available(), "winograd conv1d needs AVX2 and FMA");
  if (T_out <= 0 || B <= 0) return;
  if (uses_short_path(T_out, B)) return run_short(x, B, T, pad_l, y, T_out, accumulate);
  if (uses_stacked_sgemm(T_out, B)) return run_stacked_sgemm(x, B, T, pad_l, y, T_out, accumulate);
  // Long rows (and the paths that do not stack): one row at a time, each through the blocks below.
  for (int64_t b = 0; b < B; ++b)
    run_long(x + b * T * c_in_, T, pad_l, y + b * T_out * c_out_, T_out, accumulate);
}

namespace {

// The parts of a WinogradCall every path fills the same way.
void fill_call(WinogradCall& c, const float* x, int64_t B, int64_t T, int64_t pad_l, float* y,
               int64_t T_out, bool accumulate, const WinogradTile& tile, int64_t d, int64_t Ci,
               int64_t Co, int64_t S) {
  c.x = x, c.B = B, c.T = T, c.pad_l = pad_l, c.y = y, c.T_out = T_out, c.accumulate = accumulate;
  c.a = tile.alpha(), c.m = tile.m;
  c.d = d, c.Ci = Ci, c.Co = Co, c.S = S;
  // Per phase p (output rows p + d·q, q < ⌈T_out / d⌉): n_t output tiles. Output tile i's
  // segment s reads input tile i + s of its phase, so n output tiles transform n + S − 1 input
  // tiles.
  const int64_t n_q = (T_out + d - 1) / d;
  c.n_t = (n_q + c.m - 1) / c.m;
  c.in_fn = pick_input(c.a);
  c.out_fn = pick_output(c.a);
}

}  // namespace

// Short inputs (streaming pushes, see WinogradIsa), B rows: the segments (batch row, phase) in
// blocks of at most kStackMaxRows input tiles, each block one GEMM per transform point over all
// its tiles, so the filters are read once per block — once per call up to kStackMaxRows rows —
// rather than once per phase and per batch row; each block's columns split over the threads (each
// reads its part of the filters once).
void Winograd1d::run_short(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y,
                           int64_t T_out, bool accumulate) const {
  WinogradCall c;
  fill_call(c, x, B, T, pad_l, y, T_out, accumulate, tile_, d_, c_in_, c_out_, segs_);
  const int a = c.a;
  const int64_t Ci = c.Ci, Co = c.Co;
  const int64_t in_rows = c.n_t + c.S - 1, n_seg = B * c.d;
  // Balanced blocks of whole segments (a row's stacked phases fit one block: kShortMaxRows).
  static_assert(kShortMaxRows <= kStackMaxRows, "a row's phases must fit one stacked block");
  const int64_t want = (n_seg * in_rows + kStackMaxRows - 1) / kStackMaxRows;
  const int64_t per_block = (n_seg + want - 1) / want;
  const int64_t n_blocks = (n_seg + per_block - 1) / per_block;
  const int64_t chunks = std::min<int64_t>(omp_get_max_threads(), (Co + 31) / 32);
  const int64_t chunk_cols = ((Co + 31) / 32 + chunks - 1) / chunks * 32;
  const int64_t n_items = n_blocks * chunks;
  // [ξ][tile][C_in] transformed inputs, then [ξ][tile][C_out] products; native bf16: the
  // transformed inputs as bf16 bits in the bf16 buffer ([ξ][tile][C_in] too).
  const int64_t vstride = c.vstride = per_block * in_rows * Ci;
  const int64_t mstride = c.mstride = per_block * c.n_t * Co;
  c.bt = bt_.data(), c.at = at_.data(), c.bias = bias_.data();
  c.pk = short_b_.empty() ? &filters_.pk : &short_b_;
  c.native_bf16 = short_b_.empty() && native_bf16_;
#pragma omp parallel
  {
    WinogradScratch& sc = winograd_scratch();
    // A batch grows the thread's scratch past what load reserved, once (kept between calls).
    if (sc.f32.size() < static_cast<size_t>(a * (vstride + mstride)))
      sc.f32.resize(static_cast<size_t>(a * (vstride + mstride)));
    if (c.native_bf16 && sc.bf16.size() < static_cast<size_t>(a * vstride))
      sc.bf16.resize(static_cast<size_t>(a * vstride));
    float* v = sc.f32.data();
    float* mo = v + a * vstride;
    int64_t have = -1;  // the block whose transformed inputs are in v
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < n_items; ++item) {
      const int64_t blk = item / chunks, ch = item % chunks;
      const int64_t o0 = ch * chunk_cols, o1 = std::min(Co, o0 + chunk_cols);
      if (o0 >= o1) continue;
      const int64_t g0 = blk * per_block, g1 = std::min(n_seg, g0 + per_block);
      short_path_item(c, g0, g1, have != blk, v, sc.bf16.data(), mo, sc.rows, o0, o1);
      have = blk;
    }
  }
}

bool Winograd1d::uses_stacked_sgemm(int64_t T_out, int64_t B) const {
  if (B < 2 || T_out <= 0 || packed_ || uses_short_path(T_out, B)) return false;
  // Rows whose phases each fit one block of the per-row path (a row of more tiles already gives
  // oneDNN GEMMs of nb rows), and of at least 2 tiles: oneDNN runs a 1-row GEMM as a GEMV, which
  // sums in another order, so such rows would not keep their bits (winograd1d_test.cc).
  const int64_t n_t = ((T_out + d_ - 1) / d_ + tile_.m - 1) / tile_.m;
  return n_t >= 2 && n_t <= block_tiles(tile_.alpha(), c_in_, c_out_);
}

// B rows of streaming size on the dnnl_sgemm path: the segments (batch row, phase) back to back
// in blocks of up to kStackMaxRows input tiles, oneDNN GEMMs over each whole block
// (stacked_sgemm_item).
void Winograd1d::run_stacked_sgemm(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y,
                                   int64_t T_out, bool accumulate) const {
  WinogradCall c;
  fill_call(c, x, B, T, pad_l, y, T_out, accumulate, tile_, d_, c_in_, c_out_, segs_);
  const int a = c.a;
  const int64_t Ci = c.Ci, Co = c.Co;
  const int64_t in_rows = c.n_t + c.S - 1, n_seg = B * c.d;
  const int64_t max_seg = std::max<int64_t>(1, kStackMaxRows / in_rows);
  const int64_t want = (n_seg + max_seg - 1) / max_seg;
  const int64_t per_block = (n_seg + want - 1) / want;
  const int64_t n_blocks = (n_seg + per_block - 1) / per_block;
  const int64_t chunks = winograd_column_chunks(n_blocks, Co, omp_get_max_threads());
  const int64_t chunk_cols = ((Co + 31) / 32 + chunks - 1) / chunks * 32;
  const int64_t n_items = n_blocks * chunks;
  const int64_t vstride = c.vstride = per_block * in_rows * Ci;
  const int64_t mstride = c.mstride = per_block * in_rows * Co;
  c.bt = bt_.data(), c.at = at_.data(), c.bias = bias_.data(), c.u = filters_.u.data();
  c.bf16 = precision_ == WinogradPrecision::bf16;
  std::atomic<int> failed{0};
#pragma omp parallel
  {
    WinogradScratch& sc = winograd_scratch();
    if (sc.f32.size() < static_cast<size_t>(a * (vstride + mstride)))
      sc.f32.resize(static_cast<size_t>(a * (vstride + mstride)));
    float* v = sc.f32.data();
    float* mo = v + a * vstride;
    int64_t have = -1;  // the block whose transformed inputs are in v
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < n_items; ++item) {
      const int64_t blk = item / chunks, ch = item % chunks;
      const int64_t o0 = ch * chunk_cols, o1 = std::min(Co, o0 + chunk_cols);
      if (o0 >= o1) continue;
      const int64_t g0 = blk * per_block, g1 = std::min(n_seg, g0 + per_block);
      stacked_sgemm_item(c, g0, g1, have != blk, v, mo, o0, o1, failed);
      have = blk;
    }
  }
  MESHNN_CHECK_AS(BackendError, failed.load() == 0, "winograd conv1d: oneDNN sgemm K=", Ci,
                  " N=", Co, " failed (status ", failed.load(), ")");
}

// One row of any length: blocks of nb output tiles of one phase.
void Winograd1d::run_long(const float* x, int64_t T, int64_t pad_l, float* y, int64_t T_out,
                          bool accumulate) const {
  WinogradCall c;
  fill_call(c, x, 1, T, pad_l, y, T_out, accumulate, tile_, d_, c_in_, c_out_, segs_);
  const int a = c.a;
  const int64_t d = c.d, Ci = c.Ci, Co = c.Co, S = c.S, n_t = c.n_t;
  // Work items: blocks of nb output tiles of one phase, times column chunks of C_out when there
  // are too few blocks for the threads (short streaming windows). Each thread runs whole items
  // (input transform → single-threaded GEMMs → output transform of its columns) in its own
  // scratch: no barrier inside a layer, and a thread that the OS deschedules only delays its
  // own items (dynamic schedule). A thread that takes a second chunk of the block it already
  // transformed reuses the transform. nb: the products of a block stay cache-sized; with the
  // packed filters small blocks cost no re-packing (dnnl_sgemm re-packed the C_in × C_out
  // filter per call: 32 rows were up to 1.5× slower than 64 there).
  const int64_t nb = c.nb = block_tiles(a, Ci, Co);
  const int64_t blocks_per_phase = c.blocks_per_phase = (n_t + nb - 1) / nb;
  const int64_t n_blocks = d * blocks_per_phase;
  const int64_t chunks = winograd_column_chunks(n_blocks, Co, omp_get_max_threads());
  const int64_t chunk_cols = ((Co + 31) / 32 + chunks - 1) / chunks * 32;
  const int64_t n_items = n_blocks * chunks;
  const int64_t vrows = nb + S - 1;
  // [ξ][tile][C_in] transformed inputs, then [ξ][tile][C_out] products; native bf16: the
  // transformed inputs as bf16 bits in the bf16 buffer ([ξ][tile][C_in] too).
  const int64_t vstride = c.vstride = vrows * Ci, mstride = c.mstride = nb * Co;
  c.bt = bt_.data(), c.at = at_.data(), c.bias = bias_.data(), c.u = filters_.u.data();
  c.pk = &filters_.pk;
  c.bf16 = precision_ == WinogradPrecision::bf16;
  c.native_bf16 = native_bf16_, c.packed = packed_;
  std::atomic<int> failed{0};  // a dnnl status (exceptions cannot leave the parallel region)
#pragma omp parallel
  {
    WinogradScratch& sc = winograd_scratch();
    std::vector<float>& buf = sc.f32;
    std::vector<uint16_t>& buf16 = sc.bf16;
    if (buf.size() < static_cast<size_t>(a * (vstride + mstride)))
      buf.resize(static_cast<size_t>(a * (vstride + mstride)));
    if (native_bf16_ && buf16.size() < static_cast<size_t>(a * vstride))
      buf16.resize(static_cast<size_t>(a * vstride));
    float* v = buf.data();
    float* mo = v + a * vstride;
    int64_t have = -1;  // the block whose transformed inputs are in v
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < n_items; ++item) {
      const int64_t blk = item / chunks, ch = item % chunks;
      const int64_t o0 = ch * chunk_cols, o1 = std::min(Co, o0 + chunk_cols);
      if (o0 >= o1) continue;
      block_item(c, blk, have != blk, v, buf16.data(), mo, o0, o1, failed);
      have = blk;
    }
  }
  MESHNN_CHECK_AS(BackendError, failed.load() == 0, "winograd conv1d: oneDNN sgemm K=", Ci,
                  " N=", Co, " failed (status ", failed.load(), ")");
}

}  // namespace meshnn::kernels
