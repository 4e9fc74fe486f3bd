#include "kernels/packed_gemm.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "core/populate.h"
#include "meshnn/core/bf16.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn::kernels {

namespace {

constexpr int kNr = 32;  // columns per panel: two zmm
constexpr int kMr = 12;  // AVX-512 rows per micro-tile: 24 accumulators of the 32 zmm
// AVX2: 6 rows × one 16-column half of a panel, 12 accumulators of the 16 ymm (2 hold B, 1 the
// broadcast). Same packed layouts, same order of operations per value: the same bits.
constexpr int kMrAvx2 = 6;
constexpr int kNcAvx2 = 16;
// Packed A up to this size is packed whole (see blocked_gemm): half this core's L2 (glibc's
// sysconf; 1 MiB on Zen 5), between 128 KiB and 1 MiB, 128 KiB where unknown. The streaming
// Winograd GEMMs stack their S segments along K (K = S·C_in = 2304 for BigVGAN's 768-channel
// K = 11 layers), so with a fixed 128 KiB a single 32-frame push already took the chunked loop,
// whose B reads are not prefetched (docs/benchmarks.md "Issue 34 (wave 23)").
int64_t whole_a_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? std::clamp<int64_t>(l2 / 2, 128 * 1024, 1024 * 1024) : int64_t{128 * 1024};
  }();
  return bytes;
}
// K chunk: one panel's chunk (f32 256 × 32 × 4 B, bf16 512 × 32 × 2 B) = 32 KiB, within L1.
constexpr int64_t kKcF32 = 256;
constexpr int64_t kKcBf16 = 512;

inline __mmask16 col_mask(int valid) {
  return valid >= 16  ? __mmask16(0xffff)
         : valid <= 0 ? __mmask16(0)
                      : __mmask16((1u << valid) - 1u);
}

// C (MR × 32, `valid` columns) (+)= A (MR × kc) · panel chunk (kc × 32). The chunk is summed in
// fresh accumulators and then added to C: chains of kc terms rather than one chain over all of K
// (deep Winograd GEMMs, K = S·C_in up to 3·1536, stay at the f32 contract of the direct loop).
template <int MR>
__attribute__((target("avx512f"))) void micro_f32(int64_t kc, const float* a, int64_t ldb,
                                                  const float* b, float* c, int64_t ldc, int valid,
                                                  bool load_c, const float* pf) {
  // a: packed [k][MR]; b: rows ldb apart (kNr in a packed panel)
  const __mmask16 m0 = col_mask(valid), m1 = col_mask(valid - 16);
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    if (pf) {
      _mm_prefetch(reinterpret_cast<const char*>(pf + k * ldb), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(pf + k * ldb + 16), _MM_HINT_T0);
    }
    const __m512 b0 = _mm512_loadu_ps(b + k * ldb), b1 = _mm512_loadu_ps(b + k * ldb + 16);
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(a[k * MR + i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    if (load_c) {
      acc0[i] = _mm512_add_ps(acc0[i], _mm512_maskz_loadu_ps(m0, c + i * ldc));
      acc1[i] = _mm512_add_ps(acc1[i], _mm512_maskz_loadu_ps(m1, c + i * ldc + 16));
    }
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
}

inline __attribute__((target("avx2,fma"))) __m256i lane_mask8(int valid) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// C (MR × 16, `valid` columns) (+)= A (MR × kc) · one 16-column half of a panel chunk (b points at
// the half, rows ldb apart); a packed [k][MR]. The chunk's sums as in micro_f32.
template <int MR>
__attribute__((target("avx2,fma"))) void micro_f32_avx2(int64_t kc, const float* a, int64_t ldb,
                                                        const float* b, float* c, int64_t ldc,
                                                        int valid, bool load_c, const float* pf) {
  const __m256i m0 = lane_mask8(valid), m1 = lane_mask8(valid - 8);
  __m256 acc0[MR], acc1[MR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    if (pf) _mm_prefetch(reinterpret_cast<const char*>(pf + k * ldb), _MM_HINT_T0);
    const __m256 b0 = _mm256_loadu_ps(b + k * ldb), b1 = _mm256_loadu_ps(b + k * ldb + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const __m256 av = _mm256_broadcast_ss(a + k * MR + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
  }
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    if (valid >= 16) {
      if (load_c) {
        acc0[i] = _mm256_add_ps(acc0[i], _mm256_loadu_ps(ci));
        acc1[i] = _mm256_add_ps(acc1[i], _mm256_loadu_ps(ci + 8));
      }
      _mm256_storeu_ps(ci, acc0[i]);
      _mm256_storeu_ps(ci + 8, acc1[i]);
      continue;
    }
    if (load_c) {
      acc0[i] = _mm256_add_ps(acc0[i], _mm256_maskload_ps(ci, m0));
      acc1[i] = _mm256_add_ps(acc1[i], _mm256_maskload_ps(ci + 8, m1));
    }
    _mm256_maskstore_ps(ci, m0, acc0[i]);
    _mm256_maskstore_ps(ci + 8, m1, acc1[i]);
  }
}

// bf16: a holds the packed bf16 pairs [pair][MR][2] of kc (even) values per row, the pad of an odd
// K zero (B's pad row is zero too); b: the panel's chunk, [pair][2 halves][16][2].
template <int MR>
__attribute__((target("avx512f,avx512bf16"))) void micro_bf16(int64_t kc, const uint16_t* a,
                                                              int64_t ldb, const uint16_t* b,
                                                              float* c, int64_t ldc, int valid,
                                                              bool load_c, const uint16_t* pf) {
  (void)ldb, (void)pf;  // a: packed [pair][MR][2]; b: a packed panel's chunk
  const __mmask16 m0 = col_mask(valid), m1 = col_mask(valid - 16);
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  const int64_t pairs = kc / 2;
  for (int64_t p = 0; p < pairs; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(b + p * 2 * kNr);
    const __m512bh b1 = (__m512bh)_mm512_load_si512(b + p * 2 * kNr + kNr);
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      int32_t pr;
      std::memcpy(&pr, a + (p * MR + i) * 2, 4);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(pr);
      acc0[i] = _mm512_dpbf16_ps(acc0[i], av, b0);
      acc1[i] = _mm512_dpbf16_ps(acc1[i], av, b1);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    if (load_c) {
      acc0[i] = _mm512_add_ps(acc0[i], _mm512_maskz_loadu_ps(m0, c + i * ldc));
      acc1[i] = _mm512_add_ps(acc1[i], _mm512_maskz_loadu_ps(m1, c + i * ldc + 16));
    }
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
}

using MicroF32 = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int, bool,
                          const float*);
using MicroBf16 = void (*)(int64_t, const uint16_t*, int64_t, const uint16_t*, float*, int64_t, int,
                           bool, const uint16_t*);

template <int... I>
constexpr std::array<MicroF32, sizeof...(I)> f32_table(std::integer_sequence<int, I...>) {
  return {&micro_f32<I + 1>...};
}
template <int... I>
constexpr std::array<MicroF32, sizeof...(I)> f32_avx2_table(std::integer_sequence<int, I...>) {
  return {&micro_f32_avx2<I + 1>...};
}
template <int... I>
constexpr std::array<MicroBf16, sizeof...(I)> bf16_table(std::integer_sequence<int, I...>) {
  return {&micro_bf16<I + 1>...};
}
constexpr auto kF32 = f32_table(std::make_integer_sequence<int, kMr>{});
constexpr auto kF32Avx2 = f32_avx2_table(std::make_integer_sequence<int, kMrAvx2>{});
constexpr auto kBf16 = bf16_table(std::make_integer_sequence<int, kMr>{});

}  // namespace

namespace {

// 16 values of row k of B from column c (the first `valid` of them; zeros past them and for
// k ≥ K) → their bf16 bits in the low halves of 16 dwords: to_bf16's rounding (nearest even,
// NaN quietened) on 16 lanes, the same bits. (maskz shifts: GCC 12 warns that the plain ones read
// an uninitialised register.)
__attribute__((target("avx512f"))) inline __m512i bf16_lanes(const float* b, int64_t k, int64_t K,
                                                             int64_t ldb, int valid) {
  const __mmask16 m = col_mask(valid);
  if (k >= K || m == 0) return _mm512_setzero_si512();
  const __m512i u = _mm512_castps_si512(_mm512_maskz_loadu_ps(m, b + k * ldb));
  const __m512i hi = _mm512_maskz_srli_epi32(0xffff, u, 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_maskz_srli_epi32(
      0xffff, _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb)), 16);
  return _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
}

// One bf16 panel: columns [0, valid) of b (K × ·, ldb) → dst [pair][half][16][2] (kp / 2 pairs),
// the layout of the scalar loop in the constructor, 32 values per store.
__attribute__((target("avx512f"))) void pack_panel_bf16(const float* b, int64_t K, int64_t kp,
                                                        int64_t ldb, int valid, uint16_t* dst) {
  for (int64_t p = 0; p < kp / 2; ++p)
    for (int h = 0; h < 2; ++h) {
      const __m512i lo = bf16_lanes(b + 16 * h, 2 * p, K, ldb, valid - 16 * h);
      const __m512i up = bf16_lanes(b + 16 * h, 2 * p + 1, K, ldb, valid - 16 * h);
      _mm512_storeu_si512(dst + (p * 2 + h) * kNr,
                          _mm512_or_si512(lo, _mm512_maskz_slli_epi32(0xffff, up, 16)));
    }
}

}  // namespace

PackedMatrix::PackedMatrix(const float* b, int64_t K, int64_t N, int64_t ldb, GemmType type,
                           GemmIsa isa)
    : k_(K), n_(N), type_(type) {
  MESHNN_CHECK_AS(InvalidArgument, K > 0 && N > 0 && ldb >= N, "packed gemm: bad B ", K, " x ", N,
                  " (ld ", ldb, ")");
  bytes_ = packed_bytes(K, N, type);
  void* p = std::aligned_alloc(64, (bytes_ + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  populate_pages(p, bytes_);  // one kernel walk, not a trap per page (core/populate.h)
  owner_ = std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  data_ = p;
  row_stride_ = kNr;
  panel_stride_ = (type == GemmType::bf16 ? (K + 1) / 2 * 2 : K) * kNr;
  pack(b, K, N, ldb, type, isa, p);
}

PackedMatrix PackedMatrix::pack_into(void* dest, std::shared_ptr<const void> owner, const float* b,
                                     int64_t K, int64_t N, int64_t ldb, GemmType type,
                                     GemmIsa isa) {
  MESHNN_CHECK_AS(InvalidArgument, ldb >= N, "packed gemm: bad B ", K, " x ", N, " (ld ", ldb, ")");
  PackedMatrix m = packed_at(std::move(owner), dest, K, N, type);
  pack(b, K, N, ldb, type, isa, dest);
  return m;
}

void PackedMatrix::pack(const float* b, int64_t K, int64_t N, int64_t ldb, GemmType type,
                        GemmIsa isa, void* p) {
  const int64_t panels = (N + kNr - 1) / kNr;
  const int64_t kp = type == GemmType::bf16 ? (K + 1) / 2 * 2 : K;  // bf16: whole pairs
  const bool avx512 = isa == GemmIsa::best && cpu_features().avx512f;
#pragma omp parallel for schedule(static)
  for (int64_t pn = 0; pn < panels; ++pn) {
    const int64_t c0 = pn * kNr;
    if (type == GemmType::f32) {
      float* dst = static_cast<float*>(p) + pn * kp * kNr;
      for (int64_t k = 0; k < K; ++k)
        for (int j = 0; j < kNr; ++j) dst[k * kNr + j] = c0 + j < N ? b[k * ldb + c0 + j] : 0.f;
    } else if (avx512) {
      pack_panel_bf16(b + c0, K, kp, ldb, static_cast<int>(std::min<int64_t>(kNr, N - c0)),
                      static_cast<uint16_t*>(p) + pn * kp * kNr);
    } else {
      uint16_t* dst = static_cast<uint16_t*>(p) + pn * kp * kNr;
      for (int64_t k = 0; k < kp; ++k)
        for (int j = 0; j < kNr; ++j) {
          const float v = k < K && c0 + j < N ? b[k * ldb + c0 + j] : 0.f;
          // [pair][half][col][2]
          dst[(k / 2) * 2 * kNr + (j / 16) * kNr + (j % 16) * 2 + (k % 2)] = to_bf16(v).bits;
        }
    }
  }
}

size_t PackedMatrix::packed_bytes(int64_t K, int64_t N, GemmType type) {
  const int64_t panels = (N + kNr - 1) / kNr;
  const int64_t kp = type == GemmType::bf16 ? (K + 1) / 2 * 2 : K;  // bf16: whole pairs
  return static_cast<size_t>(panels * kp * kNr) * (type == GemmType::bf16 ? 2 : 4);
}

PackedMatrix PackedMatrix::packed_at(std::shared_ptr<const void> owner, const void* data, int64_t K,
                                     int64_t N, GemmType type) {
  MESHNN_CHECK_AS(InvalidArgument, K > 0 && N > 0 && reinterpret_cast<uintptr_t>(data) % 64 == 0,
                  "packed gemm: bad stored B ", K, " x ", N);
  PackedMatrix m;
  m.k_ = K, m.n_ = N, m.type_ = type;
  m.bytes_ = packed_bytes(K, N, type);
  m.owner_ = std::move(owner);
  m.data_ = data;
  m.row_stride_ = kNr;
  m.panel_stride_ = (type == GemmType::bf16 ? (K + 1) / 2 * 2 : K) * kNr;
  return m;
}

PackedMatrix PackedMatrix::row_major_view(const float* b, int64_t K, int64_t N, int64_t ldb) {
  MESHNN_CHECK_AS(InvalidArgument, K > 0 && N > 0 && ldb >= N, "packed gemm: bad B view ", K, " x ",
                  N, " (ld ", ldb, ")");
  PackedMatrix v;
  v.k_ = K, v.n_ = N, v.type_ = GemmType::f32;
  v.data_ = b;
  v.row_major_ = true;
  v.row_stride_ = ldb;
  v.panel_stride_ = kNr;
  return v;
}

namespace {

// A's rows (row[i] + k0 .. + kc for i < mr) → dst [k][mr] (f32) or [pair][mr][2] (bf16, an odd
// last k paired with zero): the micro-kernel broadcasts from one contiguous stream instead of mr
// rows.
void pack_a_f32(const float* const* row, int64_t k0, int mr, int64_t kc, float* dst) {
  for (int i = 0; i < mr; ++i)
    for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = row[i][k0 + k];
}
void pack_a_bf16(const uint16_t* const* row, int64_t k0, int mr, int64_t kc, uint16_t* dst) {
  const int64_t pairs = (kc + 1) / 2;
  if (kc % 2 == 0) {  // whole pairs: a dword transpose
    uint32_t* d32 = reinterpret_cast<uint32_t*>(dst);
    for (int i = 0; i < mr; ++i) {
      const uint16_t* r = row[i] + k0;
      for (int64_t p = 0; p < pairs; ++p) {
        uint32_t w;
        std::memcpy(&w, r + 2 * p, 4);
        d32[p * mr + i] = w;
      }
    }
    return;
  }
  for (int i = 0; i < mr; ++i) {
    const uint16_t* r = row[i] + k0;
    for (int64_t p = 0; p < pairs; ++p) {
      dst[(p * mr + i) * 2] = r[2 * p];
      dst[(p * mr + i) * 2 + 1] = 2 * p + 1 < kc ? r[2 * p + 1] : uint16_t{0};
    }
  }
}

// The blocked loop for one operand type T and micro-kernel shape (Mr rows × Nc columns, Nc = kNr
// or a half of it): per K chunk of Kc, A's chunk packed once (all M rows, in groups of Mr), then
// every panel of columns [n0, n1) against it, so a panel's chunk stays in L1 over the row groups.
// Pad: K is padded to a multiple of it in the packed layouts (2 for the bf16 pairs of vdpbf16ps,
// 1 for f32). row[i]: where A's row i starts.
template <class T, int64_t Kc, int64_t Pad, int Mr, int Nc, class PackA, class Kernels>
void blocked_gemm(const T* const* row, const PackedMatrix& b, int64_t M, float* c, int64_t ldc,
                  int64_t n0, int64_t n1, bool accumulate, PackA pack_a, const Kernels& kernels) {
  const T* B = static_cast<const T*>(b.data());
  const int64_t K = b.k(), ldb = b.row_stride(), pstride = b.panel_stride();
  // A view's last columns: the kernel reads Nc columns, past the matrix's end on its last row, so a
  // ragged panel of a view is copied into a zero-padded chunk (packed panels are padded already).
  const bool view = b.is_view();
  static thread_local std::vector<T> edge;
  auto padded = [](int64_t k) { return (k + Pad - 1) / Pad * Pad; };
  static thread_local std::vector<uint32_t> abuf;
  // Rows in groups of at most Mr, balanced (8 rows: 4 + 4, not 6 + 2: a thin group runs at its
  // FMA latency, not its throughput).
  const int64_t groups = (M + Mr - 1) / Mr, per = (M + groups - 1) / groups;
  const int64_t chunks = (K + Kc - 1) / Kc;
  // Few rows (streaming pushes): all of A packed up front (small), then panel by panel through
  // every K chunk, so B streams from memory in one sequential run per panel. Many rows: A is
  // packed one K chunk at a time and every panel visits that chunk (A's chunk stays in cache).
  const bool whole_a = groups * Mr * chunks * Kc * int64_t{sizeof(T)} <= whole_a_bytes();
  const int64_t a_chunks = whole_a ? chunks : 1;
  const size_t words =
      static_cast<size_t>(a_chunks * groups * Mr * Kc) * sizeof(T) / sizeof(uint32_t);
  if (abuf.size() < words) abuf.resize(words);
  T* ap = reinterpret_cast<T*>(abuf.data());
  auto pack_chunk = [&](int64_t ci, T* dst) {
    const int64_t k0 = ci * Kc, kc = std::min(Kc, K - k0), kcp = padded(kc);
    for (int64_t g = 0; g < groups; ++g) {
      const int mr = static_cast<int>(std::min(per, M - g * per));
      pack_a(row + g * per, k0, mr, kc, dst + g * Mr * kcp);
    }
  };
  auto b_at = [&](int64_t ci, int64_t c0) {
    return B + (c0 / kNr) * pstride + ci * Kc * ldb + c0 % kNr;
  };
  // pf: where the next call reads B. At few rows B streams from memory and the first row group
  // is its only reader (the others find it in L1), so that group fetches the next call's part
  // of B while it computes: the memory stays busy through the other groups' passes. (A prefetch
  // never faults: one that reaches past B, or past a shorter last chunk, only wastes a line.)
  auto run_chunk = [&](int64_t ci, const T* a_chunk, int64_t c0, const T* pf) {
    const int64_t k0 = ci * Kc, kc = std::min(Kc, K - k0), kcp = padded(kc);
    const T* bp = b_at(ci, c0);
    const int valid = static_cast<int>(std::min<int64_t>(Nc, n1 - c0));
    int64_t bld = ldb;
    if (view && c0 + Nc > b.n()) {
      const int64_t have = b.n() - c0;
      edge.assign(static_cast<size_t>(kc * kNr), T{});
      for (int64_t k = 0; k < kc; ++k)
        std::copy(bp + k * ldb, bp + k * ldb + have, edge.data() + k * kNr);
      bp = edge.data(), bld = kNr;
    }
    for (int64_t g = 0; g < groups; ++g) {
      const int mr = static_cast<int>(std::min(per, M - g * per));
      kernels[mr - 1](kcp, a_chunk + g * Mr * kcp, bld, bp, c + g * per * ldc + c0, ldc, valid,
                      accumulate || k0 > 0, g == 0 ? pf : nullptr);
    }
  };
  const int64_t chunk_elems = groups * Mr * Kc;
  if (whole_a) {
    for (int64_t ci = 0; ci < chunks; ++ci) pack_chunk(ci, ap + ci * chunk_elems);
    for (int64_t c0 = n0; c0 < n1; c0 += Nc)
      for (int64_t ci = 0; ci < chunks; ++ci) {
        const bool last = ci + 1 == chunks;
        const T* pf = last ? (c0 + Nc < n1 ? b_at(0, c0 + Nc) : nullptr) : b_at(ci + 1, c0);
        run_chunk(ci, ap + ci * chunk_elems, c0, pf);
      }
    return;
  }
  for (int64_t ci = 0; ci < chunks; ++ci) {
    pack_chunk(ci, ap);
    for (int64_t c0 = n0; c0 < n1; c0 += Nc) run_chunk(ci, ap, c0, nullptr);
  }
}

}  // namespace

void packed_gemm(const PackedMatrix& b, int64_t M, const void* a, int64_t lda, float* c,
                 int64_t ldc, int64_t n0, int64_t n1, bool accumulate, const int64_t* a_rows,
                 GemmIsa isa) {
  MESHNN_CHECK(n0 % kNr == 0 && n0 >= 0 && n1 <= b.n() && n0 <= n1, "packed gemm: columns [", n0,
               ", ", n1, ") of ", b.n());
  MESHNN_CHECK(packed_gemm_available(b.type()), "packed gemm: this CPU lacks the ISA");
  if (M <= 0 || n0 == n1) return;
  const size_t elt = b.type() == GemmType::f32 ? 4 : 2;
  static thread_local std::vector<const void*> rows;
  rows.resize(static_cast<size_t>(M));
  for (int64_t i = 0; i < M; ++i)
    rows[static_cast<size_t>(i)] =
        static_cast<const char*>(a) + (a_rows ? a_rows[i] : i * lda) * static_cast<int64_t>(elt);
  if (b.type() == GemmType::bf16) {
    blocked_gemm<uint16_t, kKcBf16, 2, kMr, kNr>(
        reinterpret_cast<const uint16_t* const*>(rows.data()), b, M, c, ldc, n0, n1, accumulate,
        pack_a_bf16, kBf16);
    return;
  }
  const auto* fr = reinterpret_cast<const float* const*>(rows.data());
  if (isa == GemmIsa::best && cpu_features().avx512f)
    blocked_gemm<float, kKcF32, 1, kMr, kNr>(fr, b, M, c, ldc, n0, n1, accumulate, pack_a_f32,
                                             kF32);
  else
    blocked_gemm<float, kKcF32, 1, kMrAvx2, kNcAvx2>(fr, b, M, c, ldc, n0, n1, accumulate,
                                                     pack_a_f32, kF32Avx2);
}

bool packed_gemm_available(GemmType t) {
  const CpuFeatures& f = cpu_features();
  return t == GemmType::f32 ? (f.avx2 && f.fma) || f.avx512f : f.avx512_bf16;
}

namespace {
__attribute__((target("avx512f,avx512bf16"))) void convert_native(const float* x, int64_t n,
                                                                  uint16_t* out) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i)));
  for (; i < n; ++i) out[i] = to_bf16(x[i]).bits;
}
}  // namespace

void convert_to_bf16(const float* x, int64_t n, uint16_t* out) {
  if (cpu_features().avx512_bf16) return convert_native(x, n, out);
  for (int64_t i = 0; i < n; ++i) out[i] = to_bf16(x[i]).bits;
}

void round_to_bf16_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_to_bf16(x[i]);
}

}  // namespace meshnn::kernels
