#include "kernels/snake.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/vec_sin.h"
#include "meshnn/core/cpu.h"

namespace meshnn::kernels {
namespace {

constexpr int64_t kTimeBlock =
    160;  // outputs per task: 2·160 + 10 samples × 16 ch × 4 B ≈ 21 KiB of z
constexpr int64_t kChanBlock = 16;         // one cache line of each row per task
constexpr int64_t kParallelMin = 1 << 12;  // rows·C below this run on one thread

bool use_avx2(bool force_scalar) {
  const CpuFeatures& f = cpu_features();
  return !force_scalar && f.avx2 && f.fma;
}

inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// ---- plain snake -------------------------------------------------------------------------------

__attribute__((target("avx2,fma"))) inline __m256i tail_mask(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
}

// z = x + inv · sin²(α·x): product, sine, square and a final FMA (torch rounds the inv·s² product
// separately; the difference is ≤ 1 ulp of the snake term).
__attribute__((target("avx2,fma"), always_inline)) inline __m256 snake_avx2(__m256 x, __m256 a,
                                                                            __m256 inv) {
  return _mm256_fmadd_ps(inv, sin_sq_avx2(_mm256_mul_ps(a, x)), x);
}

inline float snake_scalar(float x, float a, float inv) {
  const float s = std::sin(a * x);
  return std::fma(inv, s * s, x);
}

__attribute__((target("avx2,fma"))) void snake_row_avx2(const float* x, int64_t C,
                                                        const float* alpha, const float* inv,
                                                        float* y) {
  int64_t c = 0;
  for (; c + 8 <= C; c += 8)
    _mm256_storeu_ps(y + c, snake_avx2(_mm256_loadu_ps(x + c), _mm256_loadu_ps(alpha + c),
                                       _mm256_loadu_ps(inv + c)));
  if (c < C) {
    const __m256i m = tail_mask(C - c);
    _mm256_maskstore_ps(y + c, m,
                        snake_avx2(_mm256_maskload_ps(x + c, m), _mm256_maskload_ps(alpha + c, m),
                                   _mm256_maskload_ps(inv + c, m)));
  }
}

// ---- fused anti-aliased activation --------------------------------------------------------------

struct AaArgs {
  const float* x;
  int64_t C, lo, hi;
  const float* up2;  // 2 · up taps
  const float* down;
  const float* alpha;
  const float* inv;
  float* out;
};

// Index range of the (clamped) 2× samples that outputs [t0, t1) read.
inline void z_range(const AaArgs& a, int64_t t0, int64_t t1, int64_t& mz0, int64_t& mz1) {
  mz0 = clamp64(2 * t0 - kAaHalo, 2 * a.lo, 2 * a.hi - 1);
  mz1 = clamp64(2 * (t1 - 1) + kAaTaps - 1 - kAaHalo, 2 * a.lo, 2 * a.hi - 1);
}

// Vector v of a channel block; the last one masked when kMask.
template <int NV, bool kMask>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 load_lane(const float* p, int v,
                                                                           __m256i mask) {
  return (kMask && v == NV - 1) ? _mm256_maskload_ps(p, mask) : _mm256_loadu_ps(p);
}

// One task: outputs [t0, t1) of channels [c0, c0 + NV·8) (the last vector masked when kMask).
template <int NV, bool kMask>
__attribute__((target("avx2,fma"))) void aa_task_avx2(const AaArgs& a, int64_t t0, int64_t t1,
                                                      int64_t c0, int64_t cw, float* zbuf,
                                                      const float** rows) {
  const int64_t C = a.C;
  int64_t mz0, mz1;
  z_range(a, t0, t1, mz0, mz1);
  // X rows s−3 … s+3 for every 2× sample m = 2s + p in [mz0, mz1], clamped to the real rows.
  const int64_t r0 = (mz0 >> 1) - 3, r1 = (mz1 >> 1) + 3;
  for (int64_t i = r0; i <= r1; ++i) rows[i - r0] = a.x + clamp64(i, a.lo, a.hi - 1) * C + c0;

  const __m256i mask = tail_mask(cw - (NV - 1) * 8);
  __m256 alpha[NV], inv[NV];
  for (int v = 0; v < NV; ++v) {
    alpha[v] = load_lane<NV, kMask>(a.alpha + c0 + 8 * v, v, mask);
    inv[v] = load_lane<NV, kMask>(a.inv + c0 + 8 * v, v, mask);
  }
  __m256 ue[6],
      uo[6];  // even outputs use taps 1,3,…,11 on X(s+2 … s−3); odd 0,2,…,10 on X(s+3 … s−2)
  for (int j = 0; j < 6; ++j) {
    ue[j] = _mm256_set1_ps(a.up2[2 * j + 1]);
    uo[j] = _mm256_set1_ps(a.up2[2 * j]);
  }
  for (int64_t m = mz0; m <= mz1; ++m) {
    const int64_t s = m >> 1;  // floor division (arithmetic shift), m may be negative in a shard
    const float* const* X = rows + (s - r0);  // X[d] = row s + d − … see below
    // Even: X(s+2−j); odd: X(s+3−j). rows index of X(s+d) is (s − r0) + d.
    float* zr = zbuf + (m - mz0) * kChanBlock;
    for (int v = 0; v < NV; ++v) {
      __m256 y = _mm256_setzero_ps();
      if ((m & 1) == 0) {
        for (int j = 0; j < 6; ++j)
          y = _mm256_fmadd_ps(ue[j], load_lane<NV, kMask>(X[2 - j] + 8 * v, v, mask), y);
      } else {
        for (int j = 0; j < 6; ++j)
          y = _mm256_fmadd_ps(uo[j], load_lane<NV, kMask>(X[3 - j] + 8 * v, v, mask), y);
      }
      _mm256_storeu_ps(zr + 8 * v, snake_avx2(y, alpha[v], inv[v]));
    }
  }
  __m256 d[kAaTaps];
  for (int k = 0; k < kAaTaps; ++k) d[k] = _mm256_set1_ps(a.down[k]);
  const int64_t zlo = 2 * a.lo, zhi = 2 * a.hi - 1;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t m0 = 2 * t - kAaHalo;
    const bool interior = m0 >= zlo && m0 + kAaTaps - 1 <= zhi;
    float* o = a.out + t * C + c0;
    for (int v = 0; v < NV; ++v) {
      __m256 acc = _mm256_setzero_ps();
      if (interior) {
        const float* z = zbuf + (m0 - mz0) * kChanBlock + 8 * v;
        for (int k = 0; k < kAaTaps; ++k)
          acc = _mm256_fmadd_ps(d[k], _mm256_loadu_ps(z + k * kChanBlock), acc);
      } else {
        for (int k = 0; k < kAaTaps; ++k) {
          const int64_t mi = clamp64(m0 + k, zlo, zhi);
          acc = _mm256_fmadd_ps(d[k], _mm256_loadu_ps(zbuf + (mi - mz0) * kChanBlock + 8 * v), acc);
        }
      }
      if (kMask && v == NV - 1)
        _mm256_maskstore_ps(o + 8 * v, mask, acc);
      else
        _mm256_storeu_ps(o + 8 * v, acc);
    }
  }
}

// The AVX-512F form of aa_task_avx2: one 16-lane vector per channel block (masked when the block
// is narrower), the same operations per lane in the same order, so the outputs are bit-identical.
__attribute__((target("avx512f"), always_inline)) inline __m512 load16(const float* p, __mmask16 m,
                                                                       bool masked) {
  return masked ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
}

template <bool kMask>
__attribute__((target("avx512f"))) void aa_task_avx512(const AaArgs& a, int64_t t0, int64_t t1,
                                                       int64_t c0, int64_t cw, float* zbuf,
                                                       const float** rows) {
  const int64_t C = a.C;
  int64_t mz0, mz1;
  z_range(a, t0, t1, mz0, mz1);
  const int64_t r0 = (mz0 >> 1) - 3, r1 = (mz1 >> 1) + 3;
  for (int64_t i = r0; i <= r1; ++i) rows[i - r0] = a.x + clamp64(i, a.lo, a.hi - 1) * C + c0;

  const __mmask16 mask = static_cast<__mmask16>((1u << cw) - 1u);
  const __m512 alpha = load16(a.alpha + c0, mask, kMask);
  const __m512 inv = load16(a.inv + c0, mask, kMask);
  __m512 ue[6], uo[6];  // as in aa_task_avx2
  for (int j = 0; j < 6; ++j) {
    ue[j] = _mm512_set1_ps(a.up2[2 * j + 1]);
    uo[j] = _mm512_set1_ps(a.up2[2 * j]);
  }
  for (int64_t m = mz0; m <= mz1; ++m) {
    const float* const* X = rows + ((m >> 1) - r0);
    __m512 y = _mm512_setzero_ps();
    if ((m & 1) == 0) {
      for (int j = 0; j < 6; ++j) y = _mm512_fmadd_ps(ue[j], load16(X[2 - j], mask, kMask), y);
    } else {
      for (int j = 0; j < 6; ++j) y = _mm512_fmadd_ps(uo[j], load16(X[3 - j], mask, kMask), y);
    }
    // z = y + inv · sin²(α·y), as snake_avx2.
    _mm512_storeu_ps(zbuf + (m - mz0) * kChanBlock,
                     _mm512_fmadd_ps(inv, sin_sq_avx512(_mm512_mul_ps(alpha, y)), y));
  }
  __m512 d[kAaTaps];
  for (int k = 0; k < kAaTaps; ++k) d[k] = _mm512_set1_ps(a.down[k]);
  const int64_t zlo = 2 * a.lo, zhi = 2 * a.hi - 1;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t m0 = 2 * t - kAaHalo;
    __m512 acc = _mm512_setzero_ps();
    if (m0 >= zlo && m0 + kAaTaps - 1 <= zhi) {
      const float* z = zbuf + (m0 - mz0) * kChanBlock;
      for (int k = 0; k < kAaTaps; ++k)
        acc = _mm512_fmadd_ps(d[k], _mm512_loadu_ps(z + k * kChanBlock), acc);
    } else {
      for (int k = 0; k < kAaTaps; ++k) {
        const int64_t mi = clamp64(m0 + k, zlo, zhi);
        acc = _mm512_fmadd_ps(d[k], _mm512_loadu_ps(zbuf + (mi - mz0) * kChanBlock), acc);
      }
    }
    float* o = a.out + t * C + c0;
    if (kMask)
      _mm512_mask_storeu_ps(o, mask, acc);
    else
      _mm512_storeu_ps(o, acc);
  }
}

__attribute__((target("avx2,fma"))) void aa_task_avx2_dispatch(const AaArgs& a, int64_t t0,
                                                               int64_t t1, int64_t c0, int64_t cw,
                                                               float* zbuf, const float** rows) {
  if (cw == 16)
    aa_task_avx2<2, false>(a, t0, t1, c0, cw, zbuf, rows);
  else if (cw > 8)
    aa_task_avx2<2, true>(a, t0, t1, c0, cw, zbuf, rows);
  else if (cw == 8)
    aa_task_avx2<1, false>(a, t0, t1, c0, cw, zbuf, rows);
  else
    aa_task_avx2<1, true>(a, t0, t1, c0, cw, zbuf, rows);
}

// Scalar reference of aa_task_avx2: same blocking, same accumulation order (std::fma), std::sin.
void aa_task_scalar(const AaArgs& a, int64_t t0, int64_t t1, int64_t c0, int64_t cw, float* zbuf,
                    const float** rows) {
  const int64_t C = a.C;
  int64_t mz0, mz1;
  z_range(a, t0, t1, mz0, mz1);
  const int64_t r0 = (mz0 >> 1) - 3, r1 = (mz1 >> 1) + 3;
  for (int64_t i = r0; i <= r1; ++i) rows[i - r0] = a.x + clamp64(i, a.lo, a.hi - 1) * C + c0;
  for (int64_t m = mz0; m <= mz1; ++m) {
    const int64_t s = m >> 1;
    const float* const* X = rows + (s - r0);
    float* zr = zbuf + (m - mz0) * kChanBlock;
    for (int64_t c = 0; c < cw; ++c) {
      float y = 0.f;
      if ((m & 1) == 0)
        for (int j = 0; j < 6; ++j) y = std::fma(a.up2[2 * j + 1], X[2 - j][c], y);
      else
        for (int j = 0; j < 6; ++j) y = std::fma(a.up2[2 * j], X[3 - j][c], y);
      zr[c] = snake_scalar(y, a.alpha[c0 + c], a.inv[c0 + c]);
    }
  }
  const int64_t zlo = 2 * a.lo, zhi = 2 * a.hi - 1;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t m0 = 2 * t - kAaHalo;
    float* o = a.out + t * C + c0;
    for (int64_t c = 0; c < cw; ++c) {
      float acc = 0.f;
      for (int k = 0; k < kAaTaps; ++k)
        acc = std::fma(a.down[k], zbuf[(clamp64(m0 + k, zlo, zhi) - mz0) * kChanBlock + c], acc);
      o[c] = acc;
    }
  }
}

}  // namespace

void snake_rows_f32(const float* x, int64_t rows, int64_t C, const float* alpha, const float* inv,
                    float* y, bool force_scalar) {
  const bool avx2 = use_avx2(force_scalar);
#pragma omp parallel for schedule(static) if (rows * C >= kParallelMin)
  for (int64_t r = 0; r < rows; ++r) {
    if (avx2) {
      snake_row_avx2(x + r * C, C, alpha, inv, y + r * C);
    } else {
      for (int64_t c = 0; c < C; ++c) y[r * C + c] = snake_scalar(x[r * C + c], alpha[c], inv[c]);
    }
  }
}

void aa_snake_fused_f32(const float* x, int64_t x_bstride, int64_t B, int64_t C, int64_t lo,
                        int64_t hi, int64_t n, const float* up_taps, const float* down_taps,
                        const float* alpha, const float* inv, float* out, int64_t out_bstride,
                        ActIsa isa) {
  if (B <= 0 || n <= 0 || C <= 0) return;
  const bool avx2 = use_avx2(isa == ActIsa::scalar);
  const bool avx512 = isa == ActIsa::best && cpu_features().avx512f;
  float up2[kAaTaps];
  for (int k = 0; k < kAaTaps; ++k) up2[k] = 2.0f * up_taps[k];  // exact: a power-of-two scale
  const int64_t n_tb = (n + kTimeBlock - 1) / kTimeBlock;
  const int64_t n_cb = (C + kChanBlock - 1) / kChanBlock;
  const int64_t tasks = B * n_tb * n_cb;
  const bool par = n * C * B >= kParallelMin && tasks > 1;
#pragma omp parallel if (par)
  {
    // Per-thread scratch, allocated once per thread and reused across calls (no per-call malloc or
    // fresh-page faults): the z block (~21 KiB) and the clamped row-pointer table.
    static thread_local std::vector<float> zbuf((2 * kTimeBlock + kAaTaps) * kChanBlock);
    static thread_local std::vector<const float*> rows(kTimeBlock + 2 * kAaTaps);
#pragma omp for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t b = task / (n_tb * n_cb);
      const int64_t rem = task % (n_tb * n_cb);
      const int64_t tb = rem / n_cb, cb = rem % n_cb;
      const int64_t t0 = tb * kTimeBlock, t1 = std::min(n, t0 + kTimeBlock);
      const int64_t c0 = cb * kChanBlock, cw = std::min(C - c0, kChanBlock);
      AaArgs a{x + b * x_bstride, C, lo, hi, up2, down_taps, alpha, inv, out + b * out_bstride};
      if (avx512 && cw == kChanBlock)
        aa_task_avx512<false>(a, t0, t1, c0, cw, zbuf.data(), rows.data());
      else if (avx512)
        aa_task_avx512<true>(a, t0, t1, c0, cw, zbuf.data(), rows.data());
      else if (avx2)
        aa_task_avx2_dispatch(a, t0, t1, c0, cw, zbuf.data(), rows.data());
      else
        aa_task_scalar(a, t0, t1, c0, cw, zbuf.data(), rows.data());
    }
  }
}

}  // namespace meshnn::kernels
