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
#include "kernels/winograd1d_tiles.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"
#include "meshnn/core/tensor.h"

namespace meshnn::kernels {

using wg1d::InputFn;
using wg1d::OutputFn;
using wg1d::pick_input;
using wg1d::pick_output;

namespace {

// Target bytes of one block's transformed inputs + products (see Winograd1d::run).
constexpr int64_t kBlockBytes = 1024 * 1024;

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

bool winograd1d_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma;
}

Winograd1d::Winograd1d(const FilterWeights& weights, const float* bias, int64_t c_out, int64_t c_in,
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
      [&](float* u) {
        transform_filters(wm.g.data(), a, r, k, segs_, weights.values(), c_out, c_in, u);
      },
      [&] {
        FilterKey key("winograd1d");
        key.add(tile.m).add(tile.r).add(k).add(dilation).add(c_in).add(c_out).add(
            static_cast<int64_t>(bf16) + static_cast<int64_t>(packed_));
        weights.add_to(key, static_cast<size_t>(c_out * c_in * k));
        return key.value();
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

// Segments [g0, g1)'s n_t + S − 1 input tiles each, transformed into v back to back (segment g
// from row (g − g0)·(n_t + S − 1)).
void transform_segments(const WinogradCall& c, int64_t g0, int64_t g1, float* v) {
  const int64_t in_rows = c.n_t + c.S - 1;
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t b = g / c.d, p = g % c.d;
    const float* xb = c.x + b * c.T * c.Ci;
    for (int64_t j = 0; j < in_rows; ++j)
      c.in_fn(c.bt, xb, c.T, p + c.d * j * c.m - c.pad_l, c.d, c.Ci,
              v + ((g - g0) * in_rows + j) * c.Ci, c.vstride);
  }
}

// Segments [g0, g1)'s n_t output tiles each, output columns [o0, o1), from the products in mo
// (segment g's tile i at product row (g − g0)·seg_rows + i) into y.
void write_segments(const WinogradCall& c, int64_t g0, int64_t g1, const float* mo,
                    int64_t seg_rows, int64_t o0, int64_t o1) {
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t b = g / c.d, p = g % c.d;
    float* yb = c.y + b * c.T_out * c.Co;
    for (int64_t i = 0; i < c.n_t; ++i)
      c.out_fn(c.at, c.m, mo + ((g - g0) * seg_rows + i) * c.Co + o0, c.mstride, c.bias + o0,
               o1 - o0, yb + o0, c.Co, p + c.d * i * c.m, c.d, c.T_out, c.accumulate);
  }
}

// The items of the batched paths, blocks of per_block segments × `chunks` column chunks of 32·k
// columns, over the threads (dynamic), each thread in its own scratch grown to f32 floats and
// bf16 values (kept between calls: a batch grows it past what load reserved, once).
// item(scratch, g0, g1, fresh, o0, o1) runs segments [g0, g1), columns [o0, o1); fresh is false
// when the thread's previous item was the same block (its transformed inputs are reused).
template <class Item>
void for_segment_blocks(const WinogradCall& c, int64_t n_seg, int64_t per_block, int64_t n_blocks,
                        int64_t chunks, int64_t f32, int64_t bf16, const Item& item) {
  const int64_t Co = c.Co, chunk_cols = ((Co + 31) / 32 + chunks - 1) / chunks * 32;
#pragma omp parallel
  {
    WinogradScratch& sc = winograd_scratch();
    if (sc.f32.size() < static_cast<size_t>(f32)) sc.f32.resize(static_cast<size_t>(f32));
    if (sc.bf16.size() < static_cast<size_t>(bf16)) sc.bf16.resize(static_cast<size_t>(bf16));
    int64_t have = -1;  // the block whose transformed inputs are in the scratch
#pragma omp for schedule(dynamic, 1)
    for (int64_t it = 0; it < n_blocks * chunks; ++it) {
      const int64_t blk = it / chunks, ch = it % chunks;
      const int64_t o0 = ch * chunk_cols, o1 = std::min(Co, o0 + chunk_cols);
      if (o0 >= o1) continue;
      const int64_t g0 = blk * per_block, g1 = std::min(n_seg, g0 + per_block);
      item(sc, g0, g1, have != blk, o0, o1);
      have = blk;
    }
  }
}

// The short path's block of segments [g0, g1) (segment g: batch row g / d, phase g % d), output
// columns [o0, o1): the segments' input tiles stacked in v (transformed when `transform`, else
// reused from the thread's previous item), one GEMM per transform point over all their tiles.
// Each tile's GEMM row is the same sum whatever rows surround it (packed_gemm sums each row of C
// over K alone), so every batch row gets the bits a call of that row alone gives.
void short_path_item(const WinogradCall& c, int64_t g0, int64_t g1, bool transform, float* v,
                     uint16_t* v16, float* mo, std::vector<int64_t>& a_rows, int64_t o0,
                     int64_t o1) {
  const int a = c.a;
  const int64_t Ci = c.Ci, Co = c.Co, S = c.S, n_t = c.n_t;
  const int64_t vstride = c.vstride, mstride = c.mstride;
  // Segment g's n_t + S − 1 input tiles at rows (g − g0)·(n_t + S − 1) of v; its output tile i
  // reads rows from (g − g0)·(n_t + S − 1) + i on (a_rows) and writes product row
  // (g − g0)·n_t + i.
  const int64_t in_rows = n_t + S - 1, n_seg = g1 - g0;
  if (transform) {
    transform_segments(c, g0, g1, v);
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
  write_segments(c, g0, g1, mo, n_t, o0, o1);
}

// The dnnl_sgemm path's block of segments [g0, g1) (as in short_path_item), output columns
// [o0, o1): the segments' input tiles back to back in v, and per transform point and segment s one
// GEMM over all of them (row r reads v rows r + s, as block_item's rows do), so oneDNN packs the
// filters once per block rather than once per row. The S − 1 rows that straddle two segments are
// computed and dropped. A failed dnnl_sgemm leaves its status in `failed`.
void stacked_sgemm_item(const WinogradCall& c, int64_t g0, int64_t g1, bool transform, float* v,
                        float* mo, int64_t o0, int64_t o1, std::atomic<int>& failed) {
  const int a = c.a;
  const int64_t Ci = c.Ci, Co = c.Co, S = c.S, n_t = c.n_t;
  const int64_t vstride = c.vstride, mstride = c.mstride;
  const int64_t in_rows = n_t + S - 1, rows = (g1 - g0) * in_rows, M = rows - (S - 1);
  if (transform) {
    transform_segments(c, g0, g1, v);
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
  write_segments(c, g0, g1, mo, in_rows, o0, o1);
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
  // [ξ][tile][C_in] transformed inputs, then [ξ][tile][C_out] products; native bf16: the
  // transformed inputs as bf16 bits in the bf16 buffer ([ξ][tile][C_in] too).
  const int64_t vstride = c.vstride = per_block * in_rows * Ci;
  const int64_t mstride = c.mstride = per_block * c.n_t * Co;
  c.bt = bt_.data(), c.at = at_.data(), c.bias = bias_.data();
  c.pk = short_b_.empty() ? &filters_.pk : &short_b_;
  c.native_bf16 = short_b_.empty() && native_bf16_;
  for_segment_blocks(
      c, n_seg, per_block, n_blocks, chunks, a * (vstride + mstride),
      c.native_bf16 ? a * vstride : 0,
      [&](WinogradScratch& sc, int64_t g0, int64_t g1, bool fresh, int64_t o0, int64_t o1) {
        float* v = sc.f32.data();
        short_path_item(c, g0, g1, fresh, v, sc.bf16.data(), v + a * vstride, sc.rows, o0, o1);
      });
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
  const int64_t vstride = c.vstride = per_block * in_rows * Ci;
  const int64_t mstride = c.mstride = per_block * in_rows * Co;
  c.bt = bt_.data(), c.at = at_.data(), c.bias = bias_.data(), c.u = filters_.u.data();
  c.bf16 = precision_ == WinogradPrecision::bf16;
  std::atomic<int> failed{0};
  for_segment_blocks(
      c, n_seg, per_block, n_blocks, chunks, a * (vstride + mstride), 0,
      [&](WinogradScratch& sc, int64_t g0, int64_t g1, bool fresh, int64_t o0, int64_t o1) {
        float* v = sc.f32.data();
        stacked_sgemm_item(c, g0, g1, fresh, v, v + a * vstride, o0, o1, failed);
      });
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
