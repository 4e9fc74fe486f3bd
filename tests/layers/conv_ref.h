// float64 direct-loop references for Conv1d / Conv2d / ConvTranspose1d (PyTorch semantics,
// channels-last activations). Slow and obvious on purpose.
#pragma once

#include <cstdint>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::test {

inline std::vector<double> to_f64(const Tensor& t) {
  std::vector<double> v(t.numel());
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = p[i];
  return v;
}
inline Tensor from_f64(const std::vector<double>& v, const Shape& s) {
  Tensor t = Tensor::empty(s, DType::f32);
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = static_cast<float>(v[i]);
  return t;
}

// x: (B, T, Ci); w: (Co, Ci, K); b: (Co) or empty → (B, T_out, Co), zero padding pl | pr.
inline std::vector<double> conv1d_ref(const std::vector<double>& x, int64_t B, int64_t T,
                                      int64_t Ci, const std::vector<double>& w, int64_t Co,
                                      int64_t K, const std::vector<double>& b, int64_t stride,
                                      int64_t dil, int64_t pl, int64_t pr, int64_t* T_out) {
  const int64_t eff = (K - 1) * dil + 1;
  const int64_t To = (T + pl + pr - eff) / stride + 1;
  *T_out = To;
  std::vector<double> y(B * To * Co, 0.0);
  for (int64_t n = 0; n < B; ++n)
    for (int64_t t = 0; t < To; ++t)
      for (int64_t o = 0; o < Co; ++o) {
        double acc = b.empty() ? 0.0 : b[o];
        for (int64_t j = 0; j < K; ++j) {
          const int64_t s = t * stride + j * dil - pl;
          if (s < 0 || s >= T) continue;
          for (int64_t i = 0; i < Ci; ++i) acc += x[(n * T + s) * Ci + i] * w[(o * Ci + i) * K + j];
        }
        y[(n * To + t) * Co + o] = acc;
      }
  return y;
}

// x: (B, H, W, Ci); w: (Co, Ci, KH, KW) → (B, Ho, Wo, Co).
inline std::vector<double> conv2d_ref(const std::vector<double>& x, int64_t B, int64_t H, int64_t W,
                                      int64_t Ci, const std::vector<double>& w, int64_t Co,
                                      int64_t KH, int64_t KW, const std::vector<double>& b,
                                      const int64_t stride[2], const int64_t dil[2],
                                      const int64_t pl[2], const int64_t pr[2], int64_t* Ho_out,
                                      int64_t* Wo_out) {
  const int64_t Ho = (H + pl[0] + pr[0] - ((KH - 1) * dil[0] + 1)) / stride[0] + 1;
  const int64_t Wo = (W + pl[1] + pr[1] - ((KW - 1) * dil[1] + 1)) / stride[1] + 1;
  *Ho_out = Ho;
  *Wo_out = Wo;
  std::vector<double> y(B * Ho * Wo * Co, 0.0);
  for (int64_t n = 0; n < B; ++n)
    for (int64_t h = 0; h < Ho; ++h)
      for (int64_t ww = 0; ww < Wo; ++ww)
        for (int64_t o = 0; o < Co; ++o) {
          double acc = b.empty() ? 0.0 : b[o];
          for (int64_t jh = 0; jh < KH; ++jh) {
            const int64_t sh = h * stride[0] + jh * dil[0] - pl[0];
            if (sh < 0 || sh >= H) continue;
            for (int64_t jw = 0; jw < KW; ++jw) {
              const int64_t sw = ww * stride[1] + jw * dil[1] - pl[1];
              if (sw < 0 || sw >= W) continue;
              for (int64_t i = 0; i < Ci; ++i)
                acc += x[((n * H + sh) * W + sw) * Ci + i] * w[((o * Ci + i) * KH + jh) * KW + jw];
            }
          }
          y[((n * Ho + h) * Wo + ww) * Co + o] = acc;
        }
  return y;
}

// PyTorch ConvTranspose1d. x: (B, T, Ci); w: (Ci, Co, K) → (B, T_out, Co) with
// T_out = (T − 1)·stride − 2P + dil·(K − 1) + output_padding + 1.
inline std::vector<double> conv_transpose1d_ref(const std::vector<double>& x, int64_t B, int64_t T,
                                                int64_t Ci, const std::vector<double>& w,
                                                int64_t Co, int64_t K, const std::vector<double>& b,
                                                int64_t stride, int64_t dil, int64_t P,
                                                int64_t output_padding, int64_t* T_out) {
  const int64_t To = (T - 1) * stride - 2 * P + dil * (K - 1) + output_padding + 1;
  *T_out = To;
  std::vector<double> y(B * To * Co, 0.0);
  for (int64_t n = 0; n < B; ++n) {
    for (int64_t t = 0; t < To; ++t)
      for (int64_t o = 0; o < Co; ++o) y[(n * To + t) * Co + o] = b.empty() ? 0.0 : b[o];
    for (int64_t s = 0; s < T; ++s)
      for (int64_t j = 0; j < K; ++j) {
        const int64_t t = s * stride + j * dil - P;
        if (t < 0 || t >= To) continue;
        for (int64_t i = 0; i < Ci; ++i) {
          const double xv = x[(n * T + s) * Ci + i];
          for (int64_t o = 0; o < Co; ++o) y[(n * To + t) * Co + o] += xv * w[(i * Co + o) * K + j];
        }
      }
  }
  return y;
}

}  // namespace meshnn::test
