// The Winograd filter transform, run once per layer at load: u = G·w per input channel in float64,
// rounded once to f32. Kept apart from the run-time kernels because its cost is load time and its
// contract is bit-equality across ISA forms (scalar, AVX2, AVX-512F).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/winograd1d.h"
#include "meshnn/core/cpu.h"

namespace meshnn::kernels {

namespace {
// One input channel's filter transform: wc[tap][o] (K × C_out f32) → u[(ξ·S + s)·ustride + o]
// = Σ_j g[ξ][j]·wc[s·r + j][o], summed in float64 and rounded once.
struct TransformArgs {
  const double* g;
  int a, r;
  int64_t k, segs;
  const float* wc;
  int64_t c_out;
  float* u;
  int64_t ustride;
};

// Scalar lanes o0 … C_out − 1. std::fma: the same rounding as the vector paths' fmadd.
void transform_channel(const TransformArgs& t, int64_t o0) {
  for (int xi = 0; xi < t.a; ++xi)
    for (int64_t s = 0; s < t.segs; ++s) {
      float* dst = t.u + (xi * t.segs + s) * t.ustride;
      for (int64_t o = o0; o < t.c_out; ++o) {
        double acc = 0.0;
        for (int j = 0; j < t.r && s * t.r + j < t.k; ++j)
          acc = std::fma(t.g[xi * t.r + j], static_cast<double>(t.wc[(s * t.r + j) * t.c_out + o]),
                         acc);
        dst[o] = static_cast<float>(acc);
      }
    }
}

// Lanes o0 … (C_out / 4)·4 − 1, four doubles at a time; returns where it stopped.
__attribute__((target("avx2,fma"))) int64_t transform_channel_avx2(const TransformArgs& t,
                                                                   int64_t o0) {
  const int64_t vec_end = t.c_out / 4 * 4;
  for (int xi = 0; xi < t.a; ++xi)
    for (int64_t s = 0; s < t.segs; ++s) {
      float* dst = t.u + (xi * t.segs + s) * t.ustride;
      const int nj = static_cast<int>(std::min<int64_t>(t.r, t.k - s * t.r));
      for (int64_t o = o0; o < vec_end; o += 4) {
        __m256d acc = _mm256_setzero_pd();
        for (int j = 0; j < nj; ++j)
          acc = _mm256_fmadd_pd(_mm256_set1_pd(t.g[xi * t.r + j]),
                                _mm256_cvtps_pd(_mm_loadu_ps(t.wc + (s * t.r + j) * t.c_out + o)),
                                acc);
        _mm_storeu_ps(dst + o, _mm256_cvtpd_ps(acc));
      }
    }
  return std::max(o0, vec_end);
}

// Lanes 0 … (C_out / 8)·8 − 1, eight doubles at a time (the AVX2 form's operations per lane).
__attribute__((target("avx512f"))) int64_t transform_channel_avx512(const TransformArgs& t) {
  const int64_t vec_end = t.c_out / 8 * 8;
  for (int xi = 0; xi < t.a; ++xi)
    for (int64_t s = 0; s < t.segs; ++s) {
      float* dst = t.u + (xi * t.segs + s) * t.ustride;
      const int nj = static_cast<int>(std::min<int64_t>(t.r, t.k - s * t.r));
      for (int64_t o = 0; o < vec_end; o += 8) {
        __m512d acc = _mm512_setzero_pd();
        for (int j = 0; j < nj; ++j)
          acc = _mm512_fmadd_pd(
              _mm512_set1_pd(t.g[xi * t.r + j]),
              _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(t.wc + (s * t.r + j) * t.c_out + o)),
              acc);
        // (maskz forms: GCC 12 warns that the plain ones read an uninitialised register)
        _mm256_storeu_ps(dst + o, _mm512_maskz_cvtpd_ps(0xff, acc));
      }
    }
  return vec_end;
}

}  // namespace

void transform_filters(const double* g, int alpha, int r, int64_t k, int64_t segs,
                       const float* weights, int64_t c_out, int64_t c_in, float* u,
                       TransformIsa isa) {
  const CpuFeatures& f = cpu_features();
  const bool avx2 = isa != TransformIsa::scalar && winograd1d_available();
  const bool avx512 = isa == TransformIsa::best && avx2 && f.avx512f;
  // A block of input channels at a time: the gather reads kBlock·K contiguous floats per output
  // channel rather than K floats C_in·K apart (measured: the strided gather dominated the load).
  constexpr int64_t kBlock = 16;
#pragma omp parallel
  {
    std::vector<float> wc(static_cast<size_t>(kBlock * k * c_out));
#pragma omp for schedule(static)
    for (int64_t c0 = 0; c0 < c_in; c0 += kBlock) {
      const int64_t nb = std::min(kBlock, c_in - c0);
      // wc[i][o] = w[o][c0·K + i] (i = cc·K + tap), 64 output channels at a time so both the
      // reads (64 rows of kBlock·K floats) and the writes (64 floats per i) stay in cache.
      for (int64_t o0 = 0; o0 < c_out; o0 += 64) {
        const int64_t o1 = std::min(c_out, o0 + 64);
        for (int64_t i = 0; i < nb * k; ++i)
          for (int64_t o = o0; o < o1; ++o) wc[i * c_out + o] = weights[(o * c_in + c0) * k + i];
      }
      for (int64_t cc = 0; cc < nb; ++cc) {
        const TransformArgs ta{g,           alpha,
                               r,           k,
                               segs,        wc.data() + cc * k * c_out,
                               c_out,       u + (c0 + cc) * c_out,
                               c_in * c_out};
        int64_t o = avx512 ? transform_channel_avx512(ta) : 0;
        if (avx2) o = transform_channel_avx2(ta, o);
        transform_channel(ta, o);
      }
    }
  }
}

}  // namespace meshnn::kernels
