// A small GEMM against a right-hand matrix packed once: C (M × N) (+)= A (M × K) · B (K × N).
//
// Made for the Winograd kernels' per-transform-point GEMMs, whose B (the transformed filters) is
// fixed at load and whose M (tiles of one block) is small when streaming: `dnnl_sgemm` re-packs
// all of B on every call, which costs as much as the multiplies at M ≈ 8-30 rows. Here B is packed
// once into panels of 32 columns and every call reads it as stored.
//
//   f32   A f32, B f32, f32 FMA (AVX-512F, or AVX2 + FMA)
//   bf16  A bf16 bits, B bf16 (rounded once at packing, nearest even), f32 accumulation
//         (`vdpbf16ps`, AVX512-BF16): each product of two bf16 values is exact in f32, only the
//         sums round, as in docs/precision.md.
//
// Register blocking: 12 rows × 32 columns of C in 24 zmm accumulators (AVX2: 6 rows × 16 columns
// in 12 ymm); K in chunks that keep one B panel in L1; A's chunk packed per call into [k][rows] so
// the broadcasts read one stream. The Winograd kernels use the bf16 form at load and the f32 form
// for short inputs (streaming pushes: few rows, B read once per call at memory speed); on long
// inputs the f32 form measured 0.6-0.8× of `dnnl_sgemm` (docs/benchmarks.md), which keeps those.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace meshnn::kernels {

enum class GemmType { f32, bf16 };

// Which f32 micro-kernel runs: best (AVX-512F where the CPU has it, else AVX2), or avx2 even on an
// AVX-512 CPU, so that a test runs that path there. Both give the same bits. For packing a bf16 B:
// best rounds 16 values per instruction where the CPU has AVX-512F, avx2 one at a time (the same
// bits).
enum class GemmIsa { best, avx2 };

// B (K × N) for packed_gemm: packed f32 [panel][k][32] or bf16 [panel][k/2][2 halves][16][2]
// (the two k of a pair side by side, as `vdpbf16ps` reads them; columns past N are zeros), or an
// f32 row-major view that copies nothing (the f32 micro-kernels read 32-column strips of its rows
// in place; at few rows the GEMM is bound by reading B from memory, which the view does as fast as
// a packed copy, measured in docs/benchmarks.md, without the copy's memory and first-use cost).
class PackedMatrix {
 public:
  PackedMatrix() = default;
  // b: K × N row-major f32 with leading dimension ldb. Parallel over panels (OpenMP). isa: how a
  // bf16 B is rounded and laid out (GemmIsa; the same bits either way).
  PackedMatrix(const float* b, int64_t K, int64_t N, int64_t ldb, GemmType type,
               GemmIsa isa = GemmIsa::best);
  // b: K × N row-major f32 (leading dimension ldb), read in place; b must outlive the view.
  static PackedMatrix row_major_view(const float* b, int64_t K, int64_t N, int64_t ldb);
  // The same, packed into packed_bytes(K, N, type) bytes at dest (64-byte aligned: a filter-cache
  // entry being written), which owner keeps alive.
  static PackedMatrix pack_into(void* dest, std::shared_ptr<const void> owner, const float* b,
                                int64_t K, int64_t N, int64_t ldb, GemmType type,
                                GemmIsa isa = GemmIsa::best);
  // The bytes of a packed K × N matrix of this type.
  static size_t packed_bytes(int64_t K, int64_t N, GemmType type);
  // A packed matrix stored elsewhere in this class's packed layout (packed_bytes(K, N, type) bytes
  // at data, 64-byte aligned: a mapped filter-cache entry), kept alive by owner.
  static PackedMatrix packed_at(std::shared_ptr<const void> owner, const void* data, int64_t K,
                                int64_t N, GemmType type);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  GemmType type() const { return type_; }
  size_t bytes() const { return bytes_; }  // 0 for a row-major view
  const void* data() const { return data_; }
  // A row-major view (row_major_view), not the packed layout.
  bool is_view() const { return row_major_; }
  // Element (k, c) is at data() + (c / 32)·panel_stride() + k·row_stride() + c % 32.
  int64_t row_stride() const { return row_stride_; }
  int64_t panel_stride() const { return panel_stride_; }

 private:
  // Packs b into dest in this class's layout (parallel over panels).
  static void pack(const float* b, int64_t K, int64_t N, int64_t ldb, GemmType type, GemmIsa isa,
                   void* dest);
  std::shared_ptr<const void> owner_;  // the packed storage; null for a row-major view
  const void* data_ = nullptr;
  bool row_major_ = false;
  int64_t k_ = 0, n_ = 0, row_stride_ = 0, panel_stride_ = 0;
  size_t bytes_ = 0;
  GemmType type_ = GemmType::f32;
};

// C[i][n0..n1) (+)= Σ_k A[i][k]·B[k][n0..n1) for i < M; A row-major with leading dimension lda
// (f32 values, or bf16 bits for a bf16 B), or, when a_rows is given, row i of A starting
// a_rows[i] elements into a (gathered rows: the Winograd kernels stack the tiles of all dilation
// phases this way); n0 a multiple of 32, n1 ≤ B.n(). Single-threaded (the Winograd kernels split
// their work items over threads). c = A·B, or c += A·B when accumulate.
void packed_gemm(const PackedMatrix& b, int64_t M, const void* a, int64_t lda, float* c,
                 int64_t ldc, int64_t n0, int64_t n1, bool accumulate,
                 const int64_t* a_rows = nullptr, GemmIsa isa = GemmIsa::best);

// True when this CPU runs packed_gemm of this type (f32: AVX2 + FMA or AVX-512F; bf16:
// AVX512-BF16).
bool packed_gemm_available(GemmType t);

// n f32 values → bf16 bits, round to nearest even (vcvtneps2bf16 when the CPU has AVX512-BF16).
void convert_to_bf16(const float* x, int64_t n, uint16_t* out);
// n f32 values rounded to bf16 in place, kept as f32 (the emulated bf16 operands).
void round_to_bf16_inplace(float* x, int64_t n);

}  // namespace meshnn::kernels
