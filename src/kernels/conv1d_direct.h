// Direct 1-D convolution for few channels on channels-last rows (AVX2 + FMA).
//
// Why: oneDNN 2.6 on AVX2 runs channels-last convolutions with C ≤ ~48 on kernels that reach
// 10-30 % of the machine's peak (docs/benchmarks.md); this register-blocked kernel keeps a tile of
// output rows × 8-wide output-channel vectors in registers and streams the taps, which is what
// such thin convolutions need. f32 only (the bf16 precision modes stay on oneDNN).
#pragma once

#include <cstdint>
#include <vector>

namespace meshnn::kernels {

// Weights packed once at load: (K, C_in, C_out_pad) with C_out_pad = C_out rounded up to 8 and
// zeros in the padded columns; bias (C_out_pad), zero when the layer has none.
struct DirectConv1dWeights {
  int64_t c_in = 0, c_out = 0, c_out_pad = 0, k = 0, stride = 1, dilation = 1;
  std::vector<float> w;
  std::vector<float> bias;
};

// weights: PyTorch Conv1d (C_out, C_in, K) f32; bias: C_out values or nullptr.
DirectConv1dWeights pack_direct_conv1d(const float* weights, const float* bias, int64_t c_out,
                                       int64_t c_in, int64_t k, int64_t stride, int64_t dilation);

// True when this CPU can run the kernel (AVX2 and FMA).
bool direct_conv1d_available();

// One batch row: x (T, C_in) → y (T_out, C_out); output row t reads input rows
// t·stride + j·dilation − pad_l for j < K, rows outside [0, T) being zeros. y = conv + bias, or
// y += conv + bias when accumulate. Parallel over time tiles (OpenMP).
void direct_conv1d(const DirectConv1dWeights& w, const float* x, int64_t T, int64_t pad_l, float* y,
                   int64_t T_out, bool accumulate);

}  // namespace meshnn::kernels
