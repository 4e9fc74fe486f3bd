// A strided 1-D convolution (stride s ≥ 2, or a 2-tap stride-1 one; dilation 1) as dense GEMMs on
// the input rows in place.
//
// Why: channels-last, the s input rows s·u .. s·u + s − 1 are s·C_in contiguous floats, so a conv
// with stride s is a stride-1 conv of kernel J = ceil(K / s) over s·C_in "space-to-depth"
// channels that needs no copy:
//   y[t] = b + Σ_{j<J} x[s·(t + j) − pad_l .. + s) · W_j
//   W_j[r·C_in + ci][co] = w[co][ci][j·s + r]   (zero where j·s + r ≥ K)
// so J GEMMs of M = T_out, K = s·C_in, N = C_out with leading dimension s·C_in. oneDNN 2.6's
// strided direct convolution ran the MiniMax-H3 encoder's downsamplers (k 2s, stride s, 128-1024
// channels) at 37-94 GFLOP/s on 2 AVX2 threads and re-ordered the weights on every call; the GEMMs
// reach 74-117 (docs/benchmarks.md). The same form at s = 1 is a GEMM per tap:
// it runs the 2-tap phase convs of the polyphase ConvTranspose1d (kernel 2·stride upsamplers of
// BigVGAN v2, LTX and MiniMax-H3), which Winograd cannot.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/winograd1d.h"  // WeightBuffer, winograd_filters, FilterWeights

namespace meshnn::kernels {

// The filters as J blocks of (s·C_in) × C_out row-major, packed once at load (or mapped from the
// filter cache, as Winograd's filters: winograd_filters); bias (C_out), zeros when the layer has
// none.
struct StridedGemmWeights {
  int64_t c_in = 0, c_out = 0, stride = 1, blocks = 1;  // blocks = ceil(K / stride)
  WeightBuffer w;
  std::vector<float> bias;
};

// weights: PyTorch Conv1d (C_out, C_in, K) f32 (read only on a filter cache miss); bias: C_out
// values or nullptr; stride ≥ 1.
StridedGemmWeights pack_strided_gemm_conv1d(const FilterWeights& weights, const float* bias,
                                            int64_t c_out, int64_t c_in, int64_t k, int64_t stride);

// One batch row: x (T, C_in) → y (T_out, C_out); output row t reads input rows t·stride + j − pad_l
// for j < K, rows outside [0, T) being zeros. y = conv + bias, or y += conv + bias when
// accumulate. Interior rows are read in place; the few edge rows that reach past the input go
// through a zero-padded thread-local copy. Thread-safe; dnnl_sgemm parallelises (OpenMP).
void strided_gemm_conv1d(const StridedGemmWeights& w, const float* x, int64_t T, int64_t pad_l,
                         float* y, int64_t T_out, bool accumulate);

// Rows of at least this many outputs run one by one in the B-row form (below).
constexpr int64_t kStridedGemmStackMaxRows = 256;

// B batch rows: x (B, T, C_in) → y (B, T_out, C_out), each row as above. Short rows (T_out <
// kStridedGemmStackMaxRows: stream pushes stacked by StreamGroup): every row's input window copied
// (zero-padded) into one buffer, s·(T_out + J − 1) rows per batch row, so that one GEMM per block
// covers every row and reads the weights once (per row they are read B times: the 2-tap phase
// conv of BigVGAN's first upsampler holds 38 MB). The J − 1 rows between batch rows are computed
// and dropped. Each row's sums are added in the order above; dnnl_sgemm may block a larger M
// differently, so rows agree with the per-row form to f32 rounding. Longer rows run one by one in
// place, bit for bit the per-row form (for a 10 s stereo MiniMax-H3 encode the copies cost 230 MB
// of peak memory and 60 k first-call page faults; docs/benchmarks.md "Issue 34 (wave 19)").
void strided_gemm_conv1d(const StridedGemmWeights& w, const float* x, int64_t B, int64_t T,
                         int64_t pad_l, float* y, int64_t T_out, bool accumulate);

}  // namespace meshnn::kernels
