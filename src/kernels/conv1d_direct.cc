#include "kernels/conv1d_direct.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn::kernels {

namespace {

constexpr int64_t kChunkRows = 128;  // output rows per work item: its input rows stay in L1/L2

__attribute__((target("avx2,fma"))) inline __m256i lane_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// TT output rows starting at t0 × CB output-channel vectors starting at vector cb0, over the
// input channels [c0, c0 + cn) of every tap, every tap inside the input (the caller guarantees
// it). The accumulators live in registers for the whole reduction; each weight vector is loaded
// once per input channel and reused for TT rows. The first channel slice starts from the bias
// (and adds the old dst when accumulating); later slices continue from the partial sums in dst.
template <int TT, int CB>
__attribute__((target("avx2,fma"))) void tile(const DirectConv1dWeights& w, const float* x,
                                              int64_t t0, int64_t pad_l, float* y, int64_t cb0,
                                              int64_t c0, int64_t cn, bool first, bool accumulate) {
  const int64_t Ci = w.c_in, Cp = w.c_out_pad, Co = w.c_out, s = w.stride, d = w.dilation;
  __m256 acc[TT][CB];
#pragma GCC unroll 16
  for (int i = 0; i < TT; ++i) {
    const float* yr = y + (t0 + i) * Co + cb0 * 8;
#pragma GCC unroll 4
    for (int b = 0; b < CB; ++b) {
      if (first) {
        acc[i][b] = _mm256_loadu_ps(w.bias.data() + (cb0 + b) * 8);
      } else {
        const int64_t n = std::min<int64_t>(8, Co - (cb0 + b) * 8);
        acc[i][b] =
            n == 8 ? _mm256_loadu_ps(yr + b * 8) : _mm256_maskload_ps(yr + b * 8, lane_mask(n));
      }
    }
  }
  const int64_t row_step = s * Ci, K = w.k;
  const float* W = w.w.data() + cb0 * 8;
  const float* X = x + (t0 * s - pad_l) * Ci;
  for (int64_t j = 0; j < K; ++j) {
    const float* wr = W + (j * Ci + c0) * Cp;
    const float* xr = X + j * d * Ci + c0;
    for (int64_t c = 0; c < cn; ++c, wr += Cp, ++xr) {
      __m256 wv[CB];
#pragma GCC unroll 4
      for (int b = 0; b < CB; ++b) wv[b] = _mm256_loadu_ps(wr + b * 8);
#pragma GCC unroll 16
      for (int i = 0; i < TT; ++i) {
        const __m256 xb = _mm256_broadcast_ss(xr + i * row_step);
#pragma GCC unroll 4
        for (int b = 0; b < CB; ++b) acc[i][b] = _mm256_fmadd_ps(xb, wv[b], acc[i][b]);
      }
    }
  }
  const bool add_old = first && accumulate;
#pragma GCC unroll 16
  for (int i = 0; i < TT; ++i) {
    float* yr = y + (t0 + i) * Co + cb0 * 8;
#pragma GCC unroll 4
    for (int b = 0; b < CB; ++b) {
      const int64_t n = std::min<int64_t>(8, Co - (cb0 + b) * 8);
      if (n == 8) {
        __m256 v = acc[i][b];
        if (add_old) v = _mm256_add_ps(v, _mm256_loadu_ps(yr + b * 8));
        _mm256_storeu_ps(yr + b * 8, v);
      } else {
        const __m256i m = lane_mask(n);
        __m256 v = acc[i][b];
        if (add_old) v = _mm256_add_ps(v, _mm256_maskload_ps(yr + b * 8, m));
        _mm256_maskstore_ps(yr + b * 8, m, v);
      }
    }
  }
}

// Rows [t_begin, t_end) of one channel block of CB vectors: input channels in slices whose
// weights (K × slice × CB·8 floats) take at most 64 KiB, each slice over TT-row tiles then single
// rows. Measured on the vocoder shapes: no slicing loses ~10 % at C = 192, L1-sized (24 KiB)
// slices lose ~30 % at C = 96 (the partial sums make extra passes over dst).
int64_t slice_channels(const DirectConv1dWeights& w, int cb) {
  constexpr int64_t kSliceWeightBytes = 64 * 1024;
  const int64_t per_channel = w.k * cb * 8 * static_cast<int64_t>(sizeof(float));
  return std::max<int64_t>(8, kSliceWeightBytes / per_channel / 8 * 8);
}

template <int TT, int CB>
void rows_block(const DirectConv1dWeights& w, const float* x, int64_t t_begin, int64_t t_end,
                int64_t pad_l, float* y, int64_t cb0, bool accumulate) {
  const int64_t slice = slice_channels(w, CB);
  for (int64_t c0 = 0; c0 < w.c_in; c0 += slice) {
    const int64_t cn = std::min(slice, w.c_in - c0);
    int64_t t = t_begin;
    for (; t + TT <= t_end; t += TT)
      tile<TT, CB>(w, x, t, pad_l, y, cb0, c0, cn, c0 == 0, accumulate);
    for (; t < t_end; ++t) tile<1, CB>(w, x, t, pad_l, y, cb0, c0, cn, c0 == 0, accumulate);
  }
}

// All output channels for rows [t_begin, t_end): blocks of 3 vectors (24 channels) and of 2;
// a single-vector block only when C_out ≤ 8 (it needs 9 loads per 8 FMAs, so a remainder of
// one vector becomes 2 + 2). Register budget (16 ymm): TT·CB accumulators + CB weights + 1.
void rows_all_channels(const DirectConv1dWeights& w, const float* x, int64_t t_begin, int64_t t_end,
                       int64_t pad_l, float* y, bool accumulate) {
  const int64_t nv = w.c_out_pad / 8;
  if (nv == 1) return rows_block<8, 1>(w, x, t_begin, t_end, pad_l, y, 0, accumulate);
  int64_t n3 = nv / 3;
  if (nv % 3 == 1) --n3;  // 3k + 1 = 3(k − 1) + 2 + 2
  int64_t cb = 0;
  for (int64_t b = 0; b < n3; ++b, cb += 3)
    rows_block<4, 3>(w, x, t_begin, t_end, pad_l, y, cb, accumulate);
  for (; cb < nv; cb += 2) rows_block<6, 2>(w, x, t_begin, t_end, pad_l, y, cb, accumulate);
}

// Output-channel vectors per block of rows_all_channels for vector v of nv: 3, 2, or 1 (C_out ≤ 8).
int block_vectors(int64_t nv, int64_t v) {
  if (nv == 1) return 1;
  int64_t n3 = nv / 3;
  if (nv % 3 == 1) --n3;
  return v < 3 * n3 ? 3 : 2;
}

// Output rows whose taps reach past either end of the input (a few at each edge), one at a time
// with the vector path's arithmetic: the same channel slices, taps and channels in the same order,
// one fused multiply-add each, the old value added after the first slice. A tap outside the input
// is skipped, which is what an FMA with a zero row does, so an edge row rounds exactly like the
// same row computed as an interior row of an input that carries the zero rows (a time shard with
// its halo, a streaming window).
void edge_row(const DirectConv1dWeights& w, const float* x, int64_t T, int64_t t, int64_t pad_l,
              float* y, bool accumulate) {
  const int64_t Ci = w.c_in, Cp = w.c_out_pad, Co = w.c_out, nv = Cp / 8;
  float* yr = y + t * Co;
  for (int64_t o = 0; o < Co; ++o) {
    const int64_t slice = slice_channels(w, block_vectors(nv, o / 8));
    float acc = w.bias[o];
    for (int64_t c0 = 0; c0 < Ci; c0 += slice) {
      const int64_t c1 = std::min(Ci, c0 + slice);
      for (int64_t j = 0; j < w.k; ++j) {
        const int64_t r = t * w.stride + j * w.dilation - pad_l;
        if (r < 0 || r >= T) continue;
        const float* xr = x + r * Ci;
        const float* wj = w.w.data() + j * Ci * Cp + o;
        for (int64_t c = c0; c < c1; ++c) acc = std::fma(xr[c], wj[c * Cp], acc);
      }
      if (c0 == 0 && accumulate) acc = acc + yr[o];
    }
    yr[o] = acc;
  }
}

}  // namespace

DirectConv1dWeights pack_direct_conv1d(const float* weights, const float* bias, int64_t c_out,
                                       int64_t c_in, int64_t k, int64_t stride, int64_t dilation) {
  MESHNN_CHECK(c_out > 0 && c_in > 0 && k > 0 && stride > 0 && dilation > 0,
               "direct conv1d: bad geometry C_out=", c_out, " C_in=", c_in, " K=", k,
               " stride=", stride, " dilation=", dilation);
  DirectConv1dWeights p;
  p.c_in = c_in, p.c_out = c_out, p.k = k, p.stride = stride, p.dilation = dilation;
  p.c_out_pad = (c_out + 7) / 8 * 8;
  p.w.assign(static_cast<size_t>(k * c_in * p.c_out_pad), 0.f);
  p.bias.assign(static_cast<size_t>(p.c_out_pad), 0.f);
  for (int64_t o = 0; o < c_out; ++o)
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t j = 0; j < k; ++j)
        p.w[(j * c_in + c) * p.c_out_pad + o] = weights[(o * c_in + c) * k + j];
  if (bias) std::copy(bias, bias + c_out, p.bias.begin());
  return p;
}

bool direct_conv1d_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma;
}

void direct_conv1d(const DirectConv1dWeights& w, const float* x, int64_t T, int64_t pad_l, float* y,
                   int64_t T_out, bool accumulate) {
  MESHNN_CHECK(direct_conv1d_available(), "direct conv1d needs AVX2 and FMA");
  if (T_out <= 0) return;
  const int64_t s = w.stride, reach = (w.k - 1) * w.dilation;
  // Interior rows: t·s − pad_l ≥ 0 and t·s + reach − pad_l ≤ T − 1.
  int64_t lo = (pad_l + s - 1) / s;
  int64_t hi = T - 1 - reach + pad_l >= 0 ? (T - 1 - reach + pad_l) / s + 1 : 0;
  lo = std::min(lo, T_out);
  hi = std::clamp(hi, lo, T_out);
  const int64_t n_chunks = (hi - lo + kChunkRows - 1) / kChunkRows;
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (int64_t ch = 0; ch < n_chunks; ++ch) {
      const int64_t t0 = lo + ch * kChunkRows;
      rows_all_channels(w, x, t0, std::min(hi, t0 + kChunkRows), pad_l, y, accumulate);
    }
#pragma omp single nowait
    {
      for (int64_t t = 0; t < lo; ++t) edge_row(w, x, T, t, pad_l, y, accumulate);
      for (int64_t t = hi; t < T_out; ++t) edge_row(w, x, T, t, pad_l, y, accumulate);
    }
  }
}

}  // namespace meshnn::kernels
