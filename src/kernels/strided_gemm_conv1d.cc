#include "kernels/strided_gemm_conv1d.h"

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "meshnn/core/error.h"

namespace meshnn::kernels {

namespace {

// w (C_out, C_in, K) → J blocks of (s·C_in) × C_out, every value written (zeros where
// j·s + r ≥ K). A transpose: row (j·s + r)·C_in + ci of block j holds C_out contiguous values, the
// source each (co, ci)'s K taps. Per input channel, blocks of 16 output channels: 16 short reads of
// K taps and K writes of 16 contiguous values (a loop over co per value wrote one cache line per
// value).
void pack_blocks(const float* w, int64_t c_out, int64_t c_in, int64_t k, int64_t stride,
                 int64_t blocks, float* u) {
  const int64_t rows = stride * c_in;
  constexpr int64_t kCoBlock = 16;
#pragma omp parallel for schedule(static)
  for (int64_t ci = 0; ci < c_in; ++ci) {
    for (int64_t co0 = 0; co0 < c_out; co0 += kCoBlock) {
      const int64_t n = std::min(kCoBlock, c_out - co0);
      for (int64_t tap = 0; tap < k; ++tap) {
        const int64_t j = tap / stride, r = tap % stride;
        float* dst = u + (j * rows + r * c_in + ci) * c_out + co0;
        const float* src = w + (co0 * c_in + ci) * k + tap;
        for (int64_t o = 0; o < n; ++o) dst[o] = src[o * c_in * k];
      }
    }
    for (int64_t tap = k; tap < blocks * stride; ++tap) {
      const int64_t j = tap / stride, r = tap % stride;
      std::fill_n(u + (j * rows + r * c_in + ci) * c_out, c_out, 0.f);
    }
  }
}

}  // namespace

StridedGemmWeights pack_strided_gemm_conv1d(const FilterWeights& weights, const float* bias,
                                            int64_t c_out, int64_t c_in, int64_t k,
                                            int64_t stride) {
  MESHNN_CHECK(stride >= 1 && k >= 1 && c_in >= 1 && c_out >= 1, "strided gemm conv1d: stride ",
               stride, " kernel ", k);
  StridedGemmWeights p;
  p.c_in = c_in;
  p.c_out = c_out;
  p.stride = stride;
  p.blocks = (k + stride - 1) / stride;
  const int64_t rows = stride * c_in;  // K of one block's GEMM
  // The packed blocks are what the MiniMax-H3 encoder's strided layers computed at every load
  // (110 MB of f32 from weight-norm pairs: ~0.5 s); the filter cache keeps them like Winograd's
  // transformed filters.
  p.w = winograd_filters(
            static_cast<int>(p.blocks), rows, c_out, WinogradPrecision::f32, false,
            [&](float* u) { pack_blocks(weights.values(), c_out, c_in, k, stride, p.blocks, u); },
            [&] {
              FilterKey key("strided_gemm");
              key.add(c_in).add(c_out).add(k).add(stride);
              weights.add_to(key, static_cast<size_t>(c_out * c_in * k));
              return key.value();
            },
            [&] {
              return detail::concat("strided gemm C_in ", c_in, " C_out ", c_out, " K ", k,
                                    " stride ", stride, " f32");
            })
            .u;
  p.bias.assign(static_cast<size_t>(c_out), 0.f);
  if (bias) std::copy(bias, bias + c_out, p.bias.begin());
  return p;
}

namespace {

// y[0 .. M) += Σ_j a[j·s·C_in ...] · W_j; a's row u starts s·C_in floats after row u − 1.
void accumulate_blocks(const StridedGemmWeights& w, const float* a, int64_t M, float* y) {
  const int64_t lda = w.stride * w.c_in;
  for (int64_t j = 0; j < w.blocks; ++j) {
    const dnnl_status_t st = dnnl_sgemm('N', 'N', M, w.c_out, lda, 1.f, a + j * lda, lda,
                                        w.w.data() + j * lda * w.c_out, w.c_out, 1.f, y, w.c_out);
    MESHNN_CHECK_AS(BackendError, st == dnnl_success, "strided gemm conv1d: dnnl_sgemm M=", M,
                    " K=", lda, " N=", w.c_out, " failed (status ", static_cast<int>(st), ")");
  }
}

}  // namespace

void strided_gemm_conv1d(const StridedGemmWeights& w, const float* x, int64_t T, int64_t pad_l,
                         float* y, int64_t T_out, bool accumulate) {
  if (T_out <= 0) return;
  const int64_t s = w.stride, ci = w.c_in, co = w.c_out, span = w.blocks * s;
  // y starts as the bias (or the caller's values plus the bias); every GEMM adds to it.
  for (int64_t t = 0; t < T_out; ++t) {
    float* row = y + t * co;
    if (accumulate)
      for (int64_t o = 0; o < co; ++o) row[o] += w.bias[static_cast<size_t>(o)];
    else
      std::memcpy(row, w.bias.data(), static_cast<size_t>(co) * sizeof(float));
  }
  // Output row t reads input rows [s·t − pad_l, s·t − pad_l + span): in place for t in [t0, t1).
  const int64_t t0 = std::min(T_out, pad_l <= 0 ? 0 : (pad_l + s - 1) / s);
  const int64_t last = T + pad_l - span;  // s·t ≤ last for the rows that end inside the input
  const int64_t t1 = std::clamp<int64_t>(last < 0 ? 0 : last / s + 1, t0, T_out);
  if (t1 > t0) accumulate_blocks(w, x + (s * t0 - pad_l) * ci, t1 - t0, y + t0 * co);
  // Edge rows: their input window copied with the zero rows filled in.
  static thread_local std::vector<float> edge;
  for (const auto& [e0, e1] : {std::pair{int64_t{0}, t0}, std::pair{t1, T_out}}) {
    if (e1 <= e0) continue;
    const int64_t first = s * e0 - pad_l, rows = s * (e1 - e0 - 1) + span;
    edge.assign(static_cast<size_t>(rows * ci), 0.f);
    const int64_t lo = std::max<int64_t>(first, 0), hi = std::min(first + rows, T);
    if (hi > lo)
      std::memcpy(edge.data() + (lo - first) * ci, x + lo * ci,
                  static_cast<size_t>((hi - lo) * ci) * sizeof(float));
    accumulate_blocks(w, edge.data(), e1 - e0, y + e0 * co);
  }
}

void strided_gemm_conv1d(const StridedGemmWeights& w, const float* x, int64_t B, int64_t T,
                         int64_t pad_l, float* y, int64_t T_out, bool accumulate) {
  if (T_out <= 0 || B <= 0) return;
  if (B == 1 || T_out >= kStridedGemmStackMaxRows) {
    // Long rows read the weights once per T_out rows anyway: each in place, no copies.
    for (int64_t b = 0; b < B; ++b)
      strided_gemm_conv1d(w, x + b * T * w.c_in, T, pad_l, y + b * T_out * w.c_out, T_out,
                          accumulate);
    return;
  }
  const int64_t s = w.stride, ci = w.c_in, co = w.c_out, J = w.blocks;
  // Batch row b's output row t is GEMM row b·P + t, P = T_out + J − 1; its window starts at input
  // row s·t − pad_l of row b, copied to buffer row s·(b·P + t) (zeros outside [0, T)).
  const int64_t P = T_out + J - 1, M = B * P - (J - 1);
  static thread_local std::vector<float> in, out;
  in.assign(static_cast<size_t>(B * P * s * ci), 0.f);
  out.resize(static_cast<size_t>(M * co));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t first = -pad_l, rows = s * P;  // input rows [first, first + rows) of row b
    const int64_t lo = std::max<int64_t>(first, 0), hi = std::min(first + rows, T);
    if (hi > lo)
      std::memcpy(in.data() + (b * rows + lo - first) * ci, x + (b * T + lo) * ci,
                  static_cast<size_t>((hi - lo) * ci) * sizeof(float));
    // The output rows start as the bias (plus the caller's values), as in the per-row form.
    for (int64_t t = 0; t < T_out; ++t) {
      float* row = out.data() + (b * P + t) * co;
      const float* yr = y + (b * T_out + t) * co;
      for (int64_t o = 0; o < co; ++o)
        row[o] =
            accumulate ? yr[o] + w.bias[static_cast<size_t>(o)] : w.bias[static_cast<size_t>(o)];
    }
  }
  accumulate_blocks(w, in.data(), M, out.data());
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(y + b * T_out * co, out.data() + b * P * co,
                static_cast<size_t>(T_out * co) * sizeof(float));
}

}  // namespace meshnn::kernels
