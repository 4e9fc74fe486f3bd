// float64 scalar references for the transformer layers (Linear, LayerNorm, attention, encoder
// block), used by linear_test.cc, layer_norm_test.cc and attention_test.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "meshnn/core/bf16.h"
#include "meshnn/core/tensor.h"

namespace meshnn::test::ref {

inline std::vector<double> f64(const Tensor& t) {
  Tensor d = t.to(DType::f64);
  return std::vector<double>(d.data<double>(), d.data<double>() + d.numel());
}
inline Tensor to_tensor(const std::vector<double>& v, Shape s) {
  return Tensor::from_vector(v, std::move(s)).to(DType::f32);
}
inline double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
// x (M, K), w (N, K) [out, in], b (N) → (M, N); act 0 none, 1 relu, 2 gelu_tanh.
inline std::vector<double> linear(const std::vector<double>& x, const std::vector<double>& w,
                                  const std::vector<double>& b, int64_t M, int64_t K, int64_t N,
                                  int act = 0) {
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b.empty() ? 0 : b[n];
      for (int64_t k = 0; k < K; ++k) s += x[m * K + k] * w[n * K + k];
      if (act == 1) s = s > 0 ? s : 0;
      if (act == 2) s = gelu_tanh(s);
      y[m * N + n] = s;
    }
  return y;
}
inline std::vector<double> layer_norm(const std::vector<double>& x, const std::vector<double>& g,
                                      const std::vector<double>& b, int64_t M, int64_t D,
                                      double eps) {
  std::vector<double> y(x.size());
  for (int64_t m = 0; m < M; ++m) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < D; ++i) mean += x[m * D + i];
    mean /= D;
    for (int64_t i = 0; i < D; ++i) var += (x[m * D + i] - mean) * (x[m * D + i] - mean);
    var /= D;
    for (int64_t i = 0; i < D; ++i)
      y[m * D + i] = (x[m * D + i] - mean) / std::sqrt(var + eps) * g[i] + b[i];
  }
  return y;
}
// q, k, v: (S, H·Dh) head-interleaved; key_valid: S_k entries or empty. causal_past ≥ 0: query i
// sees keys 0 … causal_past + i only (a K/V cache of causal_past rows before the queries).
inline std::vector<double> attention(const std::vector<double>& q, const std::vector<double>& k,
                                     const std::vector<double>& v, int64_t Sq, int64_t Sk,
                                     int64_t H, int64_t Dh, double scale,
                                     const std::vector<uint8_t>& key_valid,
                                     int64_t causal_past = -1) {
  const int64_t D = H * Dh;
  std::vector<double> out(static_cast<size_t>(Sq * D), 0.0);
  std::vector<double> p(static_cast<size_t>(Sk));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Sq; ++i) {
      const int64_t keys = causal_past >= 0 ? causal_past + i + 1 : Sk;
      double mx = -INFINITY;
      for (int64_t j = 0; j < keys; ++j) {
        double s = 0;
        for (int64_t d = 0; d < Dh; ++d) s += q[i * D + h * Dh + d] * k[j * D + h * Dh + d];
        p[j] = s * scale;
        if (key_valid.empty() || key_valid[j]) mx = std::max(mx, p[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        p[j] = (key_valid.empty() || key_valid[j]) ? std::exp(p[j] - mx) : 0.0;
        sum += p[j];
      }
      for (int64_t j = 0; j < keys; ++j)
        for (int64_t d = 0; d < Dh; ++d)
          out[i * D + h * Dh + d] += p[j] / sum * v[j * D + h * Dh + d];
    }
  return out;
}
inline Tensor bf16_round(const Tensor& t) { return t.to(DType::bf16).to(DType::f32); }

}  // namespace meshnn::test::ref
