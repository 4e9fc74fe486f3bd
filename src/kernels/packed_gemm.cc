#include "kernels/packed_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "meshnn/core/bf16.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn::kernels {

namespace {

constexpr int kNr = 32;  // columns per panel: two zmm
constexpr int kMr = 12;  // rows per micro-tile: 24 accumulators of the 32 zmm
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
__attribute__((target("avx512f"))) void micro_f32(int64_t kc, const float* a, int64_t lda,
                                                  const float* b, float* c, int64_t ldc, int valid,
                                                  bool load_c) {
  (void)lda;  // a: packed [k][MR]
  const __mmask16 m0 = col_mask(valid), m1 = col_mask(valid - 16);
  __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b + k * kNr), b1 = _mm512_load_ps(b + k * kNr + 16);
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

// bf16: a holds the packed bf16 pairs [pair][MR][2] of kc (even) values per row, the pad of an odd
// K zero (B's pad row is zero too); b: the panel's chunk, [pair][2 halves][16][2].
template <int MR>
__attribute__((target("avx512f,avx512bf16"))) void micro_bf16(int64_t kc, const uint16_t* a,
                                                              int64_t lda, const uint16_t* b,
                                                              float* c, int64_t ldc, int valid,
                                                              bool load_c) {
  (void)lda;  // a: packed [pair][MR][2]
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

using MicroF32 = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int, bool);
using MicroBf16 = void (*)(int64_t, const uint16_t*, int64_t, const uint16_t*, float*, int64_t, int,
                           bool);

template <int... I>
constexpr std::array<MicroF32, sizeof...(I)> f32_table(std::integer_sequence<int, I...>) {
  return {&micro_f32<I + 1>...};
}
template <int... I>
constexpr std::array<MicroBf16, sizeof...(I)> bf16_table(std::integer_sequence<int, I...>) {
  return {&micro_bf16<I + 1>...};
}
constexpr auto kF32 = f32_table(std::make_integer_sequence<int, kMr>{});
constexpr auto kBf16 = bf16_table(std::make_integer_sequence<int, kMr>{});

}  // namespace

void PackedMatrix::Free::operator()(void* p) const { std::free(p); }

PackedMatrix::PackedMatrix(const float* b, int64_t K, int64_t N, int64_t ldb, GemmType type)
    : k_(K), n_(N), type_(type) {
  MESHNN_CHECK_AS(InvalidArgument, K > 0 && N > 0 && ldb >= N, "packed gemm: bad B ", K, " x ", N,
                  " (ld ", ldb, ")");
  const int64_t panels = (N + kNr - 1) / kNr;
  const int64_t kp = type == GemmType::bf16 ? (K + 1) / 2 * 2 : K;  // bf16: whole pairs
  const size_t elt = type == GemmType::bf16 ? 2 : 4;
  bytes_ = static_cast<size_t>(panels * kp * kNr) * elt;
  void* p = std::aligned_alloc(64, (bytes_ + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  p_.reset(p);
#pragma omp parallel for schedule(static)
  for (int64_t pn = 0; pn < panels; ++pn) {
    const int64_t c0 = pn * kNr;
    if (type == GemmType::f32) {
      float* dst = static_cast<float*>(p) + pn * kp * kNr;
      for (int64_t k = 0; k < K; ++k)
        for (int j = 0; j < kNr; ++j) dst[k * kNr + j] = c0 + j < N ? b[k * ldb + c0 + j] : 0.f;
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

// A's rows i0 .. i0 + mr, k0 .. k0 + kc → dst [k][mr] (f32) or [pair][mr][2] (bf16, an odd last k
// paired with zero): the micro-kernel broadcasts from one contiguous stream instead of mr rows.
void pack_a_f32(const float* a, int64_t lda, int mr, int64_t kc, float* dst) {
  for (int i = 0; i < mr; ++i) {
    const float* row = a + i * lda;
    for (int64_t k = 0; k < kc; ++k) dst[k * mr + i] = row[k];
  }
}
void pack_a_bf16(const uint16_t* a, int64_t lda, int mr, int64_t kc, uint16_t* dst) {
  const int64_t pairs = (kc + 1) / 2;
  for (int i = 0; i < mr; ++i) {
    const uint16_t* row = a + i * lda;
    for (int64_t p = 0; p < pairs; ++p) {
      dst[(p * mr + i) * 2] = row[2 * p];
      dst[(p * mr + i) * 2 + 1] = 2 * p + 1 < kc ? row[2 * p + 1] : uint16_t{0};
    }
  }
}

// The blocked loop for one operand type T: per K chunk of Kc, A's chunk packed once (all M rows,
// in groups of kMr), then every panel of columns [n0, n1) against it, so a panel's chunk stays in
// L1 over the row groups. Pad: K is padded to a multiple of it in the packed layouts (2 for the
// bf16 pairs of vdpbf16ps, 1 for f32).
template <class T, int64_t Kc, int64_t Pad, class PackA, class Kernels>
void blocked_gemm(const T* A, int64_t lda, const T* B, int64_t M, int64_t K, float* c, int64_t ldc,
                  int64_t n0, int64_t n1, bool accumulate, PackA pack_a, const Kernels& kernels) {
  auto padded = [](int64_t k) { return (k + Pad - 1) / Pad * Pad; };
  static thread_local std::vector<uint32_t> abuf;
  const int64_t groups = (M + kMr - 1) / kMr, kp = padded(K);
  const size_t words = static_cast<size_t>(groups * kMr * Kc) * sizeof(T) / sizeof(uint32_t);
  if (abuf.size() < words) abuf.resize(words);
  T* ap = reinterpret_cast<T*>(abuf.data());
  for (int64_t k0 = 0; k0 < K; k0 += Kc) {
    const int64_t kc = std::min(Kc, K - k0), kcp = padded(kc);
    const bool load_c = accumulate || k0 > 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int mr = static_cast<int>(std::min<int64_t>(kMr, M - g * kMr));
      pack_a(A + g * kMr * lda + k0, lda, mr, kc, ap + g * kMr * kcp);
    }
    for (int64_t c0 = n0; c0 < n1; c0 += kNr) {
      const T* bp = B + (c0 / kNr) * kp * kNr + k0 * kNr;
      const int valid = static_cast<int>(std::min<int64_t>(kNr, n1 - c0));
      for (int64_t g = 0; g < groups; ++g) {
        const int mr = static_cast<int>(std::min<int64_t>(kMr, M - g * kMr));
        kernels[mr - 1](kcp, ap + g * kMr * kcp, mr, bp, c + g * kMr * ldc + c0, ldc, valid,
                        load_c);
      }
    }
  }
}

void packed_gemm(const PackedMatrix& b, int64_t M, const void* a, int64_t lda, float* c,
                 int64_t ldc, int64_t n0, int64_t n1, bool accumulate) {
  const int64_t K = b.k();
  MESHNN_CHECK(n0 % kNr == 0 && n0 >= 0 && n1 <= b.n() && n0 <= n1, "packed gemm: columns [", n0,
               ", ", n1, ") of ", b.n());
  MESHNN_CHECK(packed_gemm_available(b.type()), "packed gemm: this CPU lacks the ISA");
  if (M <= 0 || n0 == n1) return;
  if (b.type() == GemmType::f32)
    blocked_gemm<float, kKcF32, 1>(static_cast<const float*>(a), lda,
                                   static_cast<const float*>(b.data()), M, K, c, ldc, n0, n1,
                                   accumulate, pack_a_f32, kF32);
  else
    blocked_gemm<uint16_t, kKcBf16, 2>(static_cast<const uint16_t*>(a), lda,
                                       static_cast<const uint16_t*>(b.data()), M, K, c, ldc, n0, n1,
                                       accumulate, pack_a_bf16, kBf16);
}

bool packed_gemm_available(GemmType t) {
  const CpuFeatures& f = cpu_features();
  return t == GemmType::f32 ? f.avx512f : f.avx512_bf16;
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
