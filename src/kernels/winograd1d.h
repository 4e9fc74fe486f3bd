// Winograd (Toom-Cook) 1-D convolution for stride-1 f32 Conv1d on channels-last rows.
//
// F(m, r): m outputs of an r-tap correlation from α = m + r − 1 inputs with α multiplications
// instead of m·r. Per layer: input transform of every tile → for each of the α transform points
// one GEMM (tiles × C_in)·(C_in × C_out) → output transform. FLOPs per output ≈ α·S/m of the
// direct algorithm's K, S = number of r-tap segments.
//
// Long kernels are cut into S = ⌈K / m⌉ segments of r = m taps (the last zero-padded): segment s
// of output tile i reads exactly input tile i + s, so every tile is transformed once and the
// segments are summed in the transform domain (S GEMMs per point, β = 1). Dilation d: the d
// phases (rows ≡ p mod d) are undilated convolutions of strided subsequences; tiles of all
// phases are stacked in one tile list, so the GEMMs cover every phase at once.
//
// Accuracy: the error grows with α and depends on the interpolation points (0, ±1, ±1/2, ±2, ∞,
// ...); tests/kernels/winograd1d_test.cc measures it per tile choice, docs/precision.md lists it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/filter_cache.h"
#include "kernels/packed_gemm.h"
#include "meshnn/core/tensor.h"

namespace meshnn::kernels {

struct WinogradTile {
  int m = 4;  // outputs per tile
  int r = 3;  // taps per segment: r == K (one segment), or r == m (segmented long kernels)
  int alpha() const { return m + r - 1; }
};

// The transform matrices of F(m, r) built in float64 from α − 1 finite points plus ∞:
// bt (α × α) input transform, g (α × r) filter transform, at (m × α) output transform, so that
// y = atᵀ-applied [(g·w) ⊙ (bt·x)] is the correlation y[u] = Σ_j x[u + j]·w[j].
struct WinogradMatrices {
  int m = 0, r = 0, alpha = 0;
  std::vector<double> bt, g, at, points;  // points: the α − 1 finite points
};
WinogradMatrices winograd_matrices(int m, int r);

// A read-only f32 weight array made once at load: page aligned, faulted in by one madvise
// (core/populate.h: half the cost of a trap per page here) and not zero-filled by us (the maker
// writes every value); or a view of a mapped filter-cache entry (kernels/filter_cache.h), which it
// keeps alive.
class WeightBuffer {
 public:
  WeightBuffer() = default;
  explicit WeightBuffer(size_t n);
  WeightBuffer(std::shared_ptr<const void> owner, const float* data, size_t n)
      : owner_(std::move(owner)), p_(data), n_(n) {}
  // Writable only for a buffer made by WeightBuffer(n), by its maker.
  float* data() { return const_cast<float*>(p_); }
  const float* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  std::shared_ptr<const void> owner_;
  const float* p_ = nullptr;
  size_t n_ = 0;
};

// The arithmetic of the transform-point GEMMs.
//   f32   f32 operands (docs/precision.md `fp32`)
//   bf16  the transformed inputs and the transformed filters rounded to bf16 once (nearest even),
//         exact products, f32 accumulation: `bf16` applied to the Winograd operands
enum class WinogradPrecision { f32, bf16 };

// A Winograd layer's transformed filters: U as `points` matrices of kd × C_out f32 values ([ξ][kd]
// [C_out]; the bf16 emulation's values rounded to bf16) for dnnl_sgemm and the short path, or, for
// native bf16 (`packed`), one packed bf16 PackedMatrix per point and no U.
struct WinogradFilters {
  WeightBuffer u;
  std::vector<PackedMatrix> pk;
  bool from_cache = false;
};
// Computes them — transform(u) writes all points·kd·C_out values of U, then the rounding or the
// packing — or, for layers of at least filter_cache_min_bytes() while the filter cache is on, maps
// them from the entry under key() (kernels/filter_cache.h) and stores a computed one there. key
// and what are called only when the cache is used: key() hashes every weight value.
WinogradFilters winograd_filters(int points, int64_t kd, int64_t c_out, WinogradPrecision precision,
                                 bool packed, const std::function<void(float*)>& transform,
                                 const std::function<uint64_t()>& key,
                                 const std::function<std::string()>& what);
// Which GEMM runs them. automatic: bf16 on a CPU with AVX512-BF16 runs our packed GEMM (filters
// rounded and packed once per transform point at load, kernels/packed_gemm.h, `vdpbf16ps`); f32,
// and bf16 elsewhere (the bf16-rounded operands in f32: exact emulation), run `dnnl_sgemm` on the
// unpacked filters (our packed f32 GEMM measured slower than it on long inputs,
// docs/benchmarks.md). avx2: the emulation path even where AVX512-BF16 exists, so that a test
// runs it on this machine, and never the short path below.
// Short path (f32, automatic, C_out >= kShortMinCols, the input tiles of all dilation phases
// together at most kShortMaxRows, kShortMaxRowsUndilated at dilation 1: streaming pushes): the
// tiles of every phase stacked into one GEMM per transform point, our f32 GEMM reading the
// transformed filters in place (a row-major view, kernels/packed_gemm.h), the columns split over
// the threads. At few rows a GEMM is bound by reading its filters; this reads each filter value
// once per call, where per-phase GEMMs read it d times and `dnnl_sgemm` re-packs it each time
// (docs/benchmarks.md).
enum class WinogradIsa { automatic, avx2 };
constexpr int64_t kShortMinCols = 256;
constexpr int64_t kShortMaxRows = 64;
// Undilated layers (one phase, nothing to stack) gain only up to about this many rows.
constexpr int64_t kShortMaxRowsUndilated = 16;
// A batch (B rows of one layer, stream pushes stacked by StreamGroup) takes the short path where
// its rows do (the same limits per row, so each row gets the bits it gets alone) and stacks the
// tiles of every row and phase into the same per-transform-point GEMMs, in blocks of up to this
// many input tiles: the filters are read once per block instead of once per row. Native bf16
// stacks batches the same way (its packed bf16 filters). Rows past the short path whose phases fit
// one block, on the dnnl_sgemm path (f32, the bf16 emulation), are stacked into oneDNN GEMMs over
// the whole block (uses_stacked_sgemm), which packs the filters once per block.
constexpr int64_t kStackMaxRows = 256;

class Winograd1d {
 public:
  // weights: PyTorch Conv1d (C_out, C_in, K) f32 (read only when the filter cache does not already
  // hold this layer's filters: FilterWeights); bias: C_out values or nullptr. The filters are
  // transformed here, once (in float64), and packed for the GEMM. Throws InvalidArgument on a
  // tile that does not fit K.
  Winograd1d(const FilterWeights& weights, const float* bias, int64_t c_out, int64_t c_in,
             int64_t k, int64_t dilation, WinogradTile tile,
             WinogradPrecision precision = WinogradPrecision::f32,
             WinogradIsa isa = WinogradIsa::automatic);

  // One batch row: x (T, C_in) → y (T_out, C_out); output row t reads input rows
  // t + j·dilation − pad_l for j < K, rows outside [0, T) being zeros (so pad_r is implied by
  // T_out). y = conv + bias, or y += conv + bias when accumulate. OpenMP inside; thread-safe
  // (the transformed filters are read-only, each OpenMP thread works in its own thread-local
  // block buffer, shared by every layer and kept between calls: no allocation in steady state).
  void run(const float* x, int64_t T, int64_t pad_l, float* y, int64_t T_out,
           bool accumulate) const;
  // B batch rows: x (B, T, C_in) → y (B, T_out, C_out), every row bit-identical to run() on it
  // alone (winograd1d_test.cc); short rows stacked (kStackMaxRows), long ones run one by one.
  void run(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
           bool accumulate) const;
  const WinogradTile& tile() const { return tile_; }
  int64_t c_in() const { return c_in_; }
  int64_t c_out() const { return c_out_; }
  WinogradPrecision precision() const { return precision_; }
  // "packed-bf16" (native vdpbf16ps), "sgemm" or "sgemm-bf16emu": the GEMM path this instance
  // runs ("sgemm" includes the packed short path, see WinogradIsa).
  const char* gemm_label() const;
  // True when a run of B rows of T_out output rows takes the short path (see WinogradIsa,
  // kStackMaxRows).
  bool uses_short_path(int64_t T_out, int64_t B = 1) const;
  // True when a run of B rows stacks them on the dnnl_sgemm path (kStackMaxRows).
  bool uses_stacked_sgemm(int64_t T_out, int64_t B) const;

 private:
  void run_short(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
                 bool accumulate) const;
  void run_stacked_sgemm(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y,
                         int64_t T_out, bool accumulate) const;
  void run_long(const float* x, int64_t T, int64_t pad_l, float* y, int64_t T_out,
                bool accumulate) const;
  int64_t c_in_, c_out_, k_, d_, segs_;
  WinogradTile tile_;
  WinogradPrecision precision_;
  bool native_bf16_ = false;    // packed bf16 GEMM (AVX512-BF16)
  bool packed_ = false;         // packed GEMM (native bf16) rather than dnnl_sgemm
  std::vector<float> bt_, at_;  // f32 copies of the transforms
  // u: sgemm path, transformed filters [ξ][s][C_in][C_out]; pk: packed path, per ξ the
  // (S·C_in) × C_out filter matrix.
  WinogradFilters filters_;
  std::vector<float> bias_;  // C_out (zeros when none)
  // f32 short path: per transform point a view of u_'s filter matrix; empty where the path is off.
  std::vector<PackedMatrix> short_b_;
};

// The per-thread block scratch both Winograd kernels run in (the calling OpenMP thread's, shared
// by every layer, kept between calls): f32 transformed inputs + products, the transformed inputs as
// bf16 bits, gathered row offsets. A layer grows it at load (reserve_winograd_scratch, called by
// the constructors) so that its first call neither allocates nor zero-fills nor faults it in.
struct WinogradScratch {
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  std::vector<int64_t> rows;
};
WinogradScratch& winograd_scratch();
// Grows every OpenMP thread's scratch (one parallel region) to at least these many values.
void reserve_winograd_scratch(size_t f32, size_t bf16);

// How many column chunks a call splits each block's GEMMs into so that `items` blocks keep
// `threads` threads busy (small streaming windows give one or two blocks): chunks of whole
// 32-column panels, at least 64 columns each. Shared by the 1-D and 2-D kernels.
int64_t winograd_column_chunks(int64_t items, int64_t c_out, int threads);

// The filter transform both Winograd kernels share: weights (C_out, C_in, K) f32 (PyTorch layout)
// → u[((ξ·segs + s)·C_in + c)·C_out + o] = Σ_j g[ξ][j]·w[o][c][s·r + j] (j < r, s·r + j < K) for
// ξ < alpha, summed in float64 and rounded once. g: alpha × r row-major. Parallel over blocks of
// input channels (OpenMP); writes every value of u once. isa: best = AVX-512F doubles where the
// CPU has them, else AVX2; every path does the same fma per value in the same order, so all give
// the same bits (tests force avx2 and scalar).
enum class TransformIsa { best, avx2, scalar };
void transform_filters(const double* g, int alpha, int r, int64_t k, int64_t segs,
                       const float* weights, int64_t c_out, int64_t c_in, float* u,
                       TransformIsa isa = TransformIsa::best);

// Which tile a K-tap kernel uses by default (chosen by measured error, winograd1d_test.cc), per
// GEMM precision.
WinogradTile default_winograd_tile(int64_t k, WinogradPrecision p = WinogradPrecision::f32);

// True when this CPU can run the kernel (AVX2 and FMA).
bool winograd1d_available();

}  // namespace meshnn::kernels
