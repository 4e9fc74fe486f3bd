// The Winograd 1-D kernel's per-tile transforms (kernels/winograd1d.cc): an input tile's α
// transformed rows and an output tile's m rows, AVX2 code unrolled per α, picked by α at run time.
// Internal to the kernel's translation units.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

namespace meshnn::kernels::wg1d {

__attribute__((target("avx2,fma"))) inline __m256i lane_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// One input tile: α rows (row0 + j·d, zeros outside [0, T)) of C channels → α transformed rows
// v[ξ·vstride + c] = Σ_j bt[ξ][j]·x[row_j][c].
template <int A>
__attribute__((target("avx2,fma"))) inline void input_tile(const float* bt, const float* x,
                                                           int64_t T, int64_t row0, int64_t d,
                                                           int64_t C, float* v, int64_t vstride) {
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
__attribute__((target("avx2,fma"))) inline void output_tile(const float* at, int m, const float* mo,
                                                            int64_t mstride, const float* bias,
                                                            int64_t C, float* y, int64_t ystride,
                                                            int64_t t0, int64_t d, int64_t T_out,
                                                            bool accumulate) {
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

inline InputFn pick_input(int a) {
  static constexpr InputFn t[] = {nullptr,       nullptr,       input_fn<2>(),  input_fn<3>(),
                                  input_fn<4>(), input_fn<5>(), input_fn<6>(),  input_fn<7>(),
                                  input_fn<8>(), input_fn<9>(), input_fn<10>(), input_fn<11>(),
                                  input_fn<12>()};
  return t[a];
}
inline OutputFn pick_output(int a) {
  static constexpr OutputFn t[] = {nullptr,        nullptr,        output_fn<2>(),  output_fn<3>(),
                                   output_fn<4>(), output_fn<5>(), output_fn<6>(),  output_fn<7>(),
                                   output_fn<8>(), output_fn<9>(), output_fn<10>(), output_fn<11>(),
                                   output_fn<12>()};
  return t[a];
}

}  // namespace meshnn::kernels::wg1d
