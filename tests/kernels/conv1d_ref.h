// Float64 scalar reference of kernels::direct_conv1d's contract (a test reference, not product
// code). weights (c_out, c_in, k), bias (c_out) or null; x: (T, c_in) → y: (T_out, c_out), input
// row t·stride + j·dilation − pad_l (zero outside [0, T)); accumulate adds into y.
#pragma once

#include <cstdint>

namespace meshnn::test {

inline void direct_conv1d_reference(const float* weights, const float* bias, int64_t c_out,
                                    int64_t c_in, int64_t k, int64_t stride, int64_t dilation,
                                    const float* x, int64_t T, int64_t pad_l, float* y,
                                    int64_t T_out, bool accumulate) {
  for (int64_t t = 0; t < T_out; ++t)
    for (int64_t o = 0; o < c_out; ++o) {
      double acc = bias ? bias[o] : 0.0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t r = t * stride + j * dilation - pad_l;
        if (r < 0 || r >= T) continue;
        for (int64_t c = 0; c < c_in; ++c)
          acc += static_cast<double>(x[r * c_in + c]) * weights[(o * c_in + c) * k + j];
      }
      float& out = y[t * c_out + o];
      out = static_cast<float>(accumulate ? out + acc : acc);
    }
}

}  // namespace meshnn::test
