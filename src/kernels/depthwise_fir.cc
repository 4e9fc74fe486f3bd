#include "kernels/depthwise_fir.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "meshnn/core/cpu.h"

namespace meshnn::kernels {
namespace {

// Below this many output values the OpenMP fork costs more than the work.
constexpr int64_t kParallelMin = 1 << 14;

__attribute__((target("avx2,fma"))) inline __m256i tail_mask(int64_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), idx);
}

// One output row, fast form: acc = fma(tap_k, x_k, acc) in tap order, 4 vectors (32 channels) at a
// time.
__attribute__((target("avx2,fma"))) void fir_row_avx2(const float* x, int64_t C, const float* taps,
                                                      int K, float* y) {
  int64_t c = 0;
  for (; c + 32 <= C; c += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < K; ++k) {
      const float* r = x + k * C + c;
      const __m256 w = _mm256_set1_ps(taps[k]);
      a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(r), a0);
      a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(r + 8), a1);
      a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(r + 16), a2);
      a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(r + 24), a3);
    }
    _mm256_storeu_ps(y + c, a0);
    _mm256_storeu_ps(y + c + 8, a1);
    _mm256_storeu_ps(y + c + 16, a2);
    _mm256_storeu_ps(y + c + 24, a3);
  }
  for (; c < C; c += 8) {
    const __m256i m = tail_mask(C - c);
    __m256 a = _mm256_setzero_ps();
    for (int k = 0; k < K; ++k)
      a = _mm256_fmadd_ps(_mm256_set1_ps(taps[k]), _mm256_maskload_ps(x + k * C + c, m), a);
    _mm256_maskstore_ps(y + c, m, a);
  }
}

// Scalar reference of fir_row_avx2: the same per-element operation sequence.
void fir_row_scalar(const float* x, int64_t C, const float* taps, int K, float* y) {
  for (int64_t c = 0; c < C; ++c) {
    float a = 0.f;
    for (int k = 0; k < K; ++k) a = std::fma(taps[k], x[k * C + c], a);
    y[c] = a;
  }
}

// MAC form on AVX2: multiply and add as separate instructions (target without "fma", so nothing can
// be contracted) → bit-identical to fir_row_mac.
__attribute__((target("avx2"))) void fir_row_mac_avx2(const float* x, int64_t C, const float* taps,
                                                      int K, float* y) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t c = 0; c < C; c += 32) {
    const int64_t w = std::min<int64_t>(32, C - c);
    __m256i m[4];
    for (int v = 0; v < 4; ++v)
      m[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(w - 8 * v)), idx);
    __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
    bool first = true;
    for (int k = 0; k < K; ++k) {
      if (taps[k] == 0.f) continue;
      const __m256 t = _mm256_set1_ps(taps[k]);
      const float* r = x + k * C + c;
      for (int v = 0; v < 4; ++v) {
        const __m256 p = _mm256_mul_ps(
            t, w >= 32 ? _mm256_loadu_ps(r + 8 * v) : _mm256_maskload_ps(r + 8 * v, m[v]));
        a[v] = first ? p : _mm256_add_ps(a[v], p);
      }
      first = false;
    }
    for (int v = 0; v < 4; ++v) {
      if (w >= 32)
        _mm256_storeu_ps(y + c + 8 * v, a[v]);
      else
        _mm256_maskstore_ps(y + c + 8 * v, m[v], a[v]);
    }
  }
}

// MAC form: products rounded, then added, tap by tap. Written without FMA so every ISA agrees.
void fir_row_mac(const float* x, int64_t C, const float* taps, int K, float* y) {
  bool first = true;
  for (int k = 0; k < K; ++k) {
    const float w = taps[k];
    if (w == 0.f) continue;
    const float* r = x + k * C;
    if (first) {
      for (int64_t c = 0; c < C; ++c) y[c] = w * r[c];
      first = false;
    } else {
      for (int64_t c = 0; c < C; ++c) {
        const float p = w * r[c];
        y[c] = y[c] + p;
      }
    }
  }
  if (first)
    for (int64_t c = 0; c < C; ++c) y[c] = 0.f;
}

}  // namespace

void depthwise_fir_f32(const float* src, int64_t B, int64_t T_pad, int64_t C, const float* taps,
                       int K, int stride, float* dst, int64_t T_out, FirImpl impl) {
  const CpuFeatures& f = cpu_features();
  const bool avx2 = impl == FirImpl::fast && f.avx2 && f.fma;
  const bool mac_avx2 = impl == FirImpl::mac && f.avx2;
  const int64_t rows = B * T_out;
  const bool par = rows * C * K >= kParallelMin;
#pragma omp parallel for schedule(static) if (par)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t b = row / T_out, t = row % T_out;
    const float* x = src + (b * T_pad + t * stride) * C;
    float* y = dst + row * C;
    if (avx2)
      fir_row_avx2(x, C, taps, K, y);
    else if (mac_avx2)
      fir_row_mac_avx2(x, C, taps, K, y);
    else if (impl == FirImpl::mac || impl == FirImpl::mac_scalar)
      fir_row_mac(x, C, taps, K, y);
    else
      fir_row_scalar(x, C, taps, K, y);
  }
}

}  // namespace meshnn::kernels
