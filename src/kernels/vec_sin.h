// Vectorised f32 sine for AVX2 + FMA (8 lanes), header-only so the fused kernels can inline it.
//
// Cody–Waite range reduction by π/2 in three parts, then the Cephes minimax polynomials for sin and
// cos on [−π/4, π/4]. P1 = 1.5703125 has 8 significant bits, so q·P1 is exact for |q| < 2^16 and
// x − q·P1 is exact (Sterbenz); the two further parts go through FMA, leaving a reduction error of
// ~|q|·5e-15 — negligible up to |x| ≈ 1e5 (SnakeBeta sees |αx| up to ~1e3). Measured max error in
// tests/kernels/vec_sin_test.cc. Beyond |x| ≈ 1e5 accuracy degrades gracefully; inf/NaN give NaN.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

namespace meshnn::kernels {

namespace sin_consts {
constexpr float kTwoOverPi = 0.636619772367581343f;
constexpr float kP1 = 1.5703125f;
constexpr float kP2 = 4.837512969970703125e-4f;
constexpr float kP3 = 7.54978995489188216e-8f;
// sin(r) ≈ r + r³·(s1 + r²·(s2 + r²·s3)); cos(r) ≈ 1 − r²/2 + r⁴·(c1 + r²·(c2 + r²·c3)).
constexpr float kS1 = -1.6666654611e-1f;
constexpr float kS2 = 8.3321608736e-3f;
constexpr float kS3 = -1.9515295891e-4f;
constexpr float kC1 = 4.166664568298827e-2f;
constexpr float kC2 = -1.388731625493765e-3f;
constexpr float kC3 = 2.443315711809948e-5f;
}  // namespace sin_consts

// Shared reduction: r ∈ [−π/4, π/4] and the quadrant q (as int32 lanes).
__attribute__((target("avx2,fma"), always_inline)) inline void sin_reduce_avx2(__m256 x, __m256& r,
                                                                               __m256i& q) {
  using namespace sin_consts;
  const __m256 qf = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kTwoOverPi)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_fnmadd_ps(qf, _mm256_set1_ps(kP1), x);
  r = _mm256_fnmadd_ps(qf, _mm256_set1_ps(kP2), r);
  r = _mm256_fnmadd_ps(qf, _mm256_set1_ps(kP3), r);
  q = _mm256_cvtps_epi32(qf);
}

// |sin| core: the polynomial for sin (even quadrant) or cos (odd quadrant) of r, without the sign.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 sin_poly_avx2(__m256 r,
                                                                               __m256i q) {
  using namespace sin_consts;
  const __m256 r2 = _mm256_mul_ps(r, r);
  __m256 ps = _mm256_fmadd_ps(_mm256_set1_ps(kS3), r2, _mm256_set1_ps(kS2));
  ps = _mm256_fmadd_ps(ps, r2, _mm256_set1_ps(kS1));
  ps = _mm256_fmadd_ps(_mm256_mul_ps(ps, r2), r, r);
  __m256 pc = _mm256_fmadd_ps(_mm256_set1_ps(kC3), r2, _mm256_set1_ps(kC2));
  pc = _mm256_fmadd_ps(pc, r2, _mm256_set1_ps(kC1));
  pc = _mm256_mul_ps(pc, _mm256_mul_ps(r2, r2));
  pc = _mm256_add_ps(_mm256_fnmadd_ps(_mm256_set1_ps(0.5f), r2, pc), _mm256_set1_ps(1.0f));
  const __m256 odd = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(q, _mm256_set1_epi32(1)), _mm256_set1_epi32(1)));
  return _mm256_blendv_ps(ps, pc, odd);
}

// sin(x), 8 lanes.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 sin_avx2(__m256 x) {
  __m256 r;
  __m256i q;
  sin_reduce_avx2(x, r, q);
  const __m256 v = sin_poly_avx2(r, q);
  // Quadrants 2 and 3 negate: move bit 1 of q into the sign bit.
  const __m256 sign =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(q, _mm256_set1_epi32(2)), 30));
  return _mm256_xor_ps(v, sign);
}

// sin²(x), 8 lanes: the sign is irrelevant, so it is skipped.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 sin_sq_avx2(__m256 x) {
  __m256 r;
  __m256i q;
  sin_reduce_avx2(x, r, q);
  const __m256 v = sin_poly_avx2(r, q);
  return _mm256_mul_ps(v, v);
}

// ---- AVX-512F forms (16 lanes): the same operations in the same order as the AVX2 ones, so each
// lane's result is bit-identical to the 8-lane form's.

__attribute__((target("avx512f"), always_inline)) inline void sin_reduce_avx512(__m512 x, __m512& r,
                                                                                __m512i& q) {
  using namespace sin_consts;
  // The all-lanes maskz forms: GCC 12 warns on the unmasked ones' undefined pass-through source.
  const __m512 qf = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(x, _mm512_set1_ps(kTwoOverPi)),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm512_fnmadd_ps(qf, _mm512_set1_ps(kP1), x);
  r = _mm512_fnmadd_ps(qf, _mm512_set1_ps(kP2), r);
  r = _mm512_fnmadd_ps(qf, _mm512_set1_ps(kP3), r);
  q = _mm512_maskz_cvtps_epi32(0xFFFF, qf);
}

__attribute__((target("avx512f"), always_inline)) inline __m512 sin_poly_avx512(__m512 r,
                                                                                __m512i q) {
  using namespace sin_consts;
  const __m512 r2 = _mm512_mul_ps(r, r);
  __m512 ps = _mm512_fmadd_ps(_mm512_set1_ps(kS3), r2, _mm512_set1_ps(kS2));
  ps = _mm512_fmadd_ps(ps, r2, _mm512_set1_ps(kS1));
  ps = _mm512_fmadd_ps(_mm512_mul_ps(ps, r2), r, r);
  __m512 pc = _mm512_fmadd_ps(_mm512_set1_ps(kC3), r2, _mm512_set1_ps(kC2));
  pc = _mm512_fmadd_ps(pc, r2, _mm512_set1_ps(kC1));
  pc = _mm512_mul_ps(pc, _mm512_mul_ps(r2, r2));
  pc = _mm512_add_ps(_mm512_fnmadd_ps(_mm512_set1_ps(0.5f), r2, pc), _mm512_set1_ps(1.0f));
  const __mmask16 odd = _mm512_test_epi32_mask(q, _mm512_set1_epi32(1));
  return _mm512_mask_blend_ps(odd, ps, pc);
}

// sin²(x), 16 lanes.
__attribute__((target("avx512f"), always_inline)) inline __m512 sin_sq_avx512(__m512 x) {
  __m512 r;
  __m512i q;
  sin_reduce_avx512(x, r, q);
  const __m512 v = sin_poly_avx512(r, q);
  return _mm512_mul_ps(v, v);
}

// Array forms with run-time dispatch (AVX2+FMA or std::sin on f32); used by tests and the benches.
// x: (n,) f32 → y: (n,) f32
void sin_f32(const float* x, float* y, int64_t n, bool force_scalar = false);

}  // namespace meshnn::kernels
