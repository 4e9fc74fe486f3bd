// Float64 scalar references for the audio kernels, written straight from the upstream
// definitions (docs/models.md) (transposed convolution as Σ_i x[i]·f[j − r·i], not the
// zero-stuffing our op uses), on channels-last (B, T, C) data held as std::vector<double>.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::test::ref {

struct Seq {  // (B, T, C) in double
  int64_t B = 0, T = 0, C = 0;
  std::vector<double> v;
  double& at(int64_t b, int64_t t, int64_t c) { return v[(b * T + t) * C + c]; }
  double at(int64_t b, int64_t t, int64_t c) const { return v[(b * T + t) * C + c]; }
};

inline Seq from_tensor(const Tensor& x) {
  Seq s{x.dim(0), x.dim(1), x.dim(2), {}};
  const Tensor d = x.to(DType::f64);
  s.v.assign(d.data<double>(), d.data<double>() + d.numel());
  return s;
}

inline Tensor to_tensor(const Seq& s) {
  Tensor t = Tensor::from_vector(s.v, {s.B, s.T, s.C});
  return t;
}

inline Seq replicate_pad(const Seq& x, int64_t l, int64_t r) {
  Seq y{x.B, x.T + l + r, x.C, {}};
  y.v.resize(y.B * y.T * y.C);
  for (int64_t b = 0; b < x.B; ++b)
    for (int64_t t = 0; t < y.T; ++t)
      for (int64_t c = 0; c < x.C; ++c)
        y.at(b, t, c) = x.at(b, std::clamp(t - l, int64_t{0}, x.T - 1), c);
  return y;
}

// Valid correlation with stride: y[t] = Σ_k f[k]·x[t·s + k].
inline Seq fir(const Seq& x, const std::vector<double>& f, int64_t s) {
  const int64_t K = static_cast<int64_t>(f.size());
  Seq y{x.B, (x.T - K) / s + 1, x.C, {}};
  y.v.assign(y.B * y.T * y.C, 0.0);
  for (int64_t b = 0; b < x.B; ++b)
    for (int64_t t = 0; t < y.T; ++t)
      for (int64_t c = 0; c < x.C; ++c) {
        double a = 0;
        for (int64_t k = 0; k < K; ++k) a += f[k] * x.at(b, t * s + k, c);
        y.at(b, t, c) = a;
      }
  return y;
}

// BigVGAN UpSample1d with explicit geometry: replicate pad, r·conv_transpose1d(stride r), crop.
inline Seq upsample(const Seq& x, const std::vector<double>& f, int64_t r, int64_t pad, int64_t pl,
                    int64_t pr) {
  const Seq xp = replicate_pad(x, pad, pad);
  const int64_t K = static_cast<int64_t>(f.size());
  const int64_t full = (xp.T - 1) * r + K;
  Seq y{x.B, full - pl - pr, x.C, {}};
  y.v.assign(y.B * y.T * y.C, 0.0);
  for (int64_t b = 0; b < x.B; ++b)
    for (int64_t i = 0; i < xp.T; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t j = i * r + k - pl;
        if (j < 0 || j >= y.T) continue;
        for (int64_t c = 0; c < x.C; ++c) y.at(b, j, c) += r * f[k] * xp.at(b, i, c);
      }
  return y;
}

inline Seq lowpass(const Seq& x, const std::vector<double>& f, int64_t stride) {
  const int64_t K = static_cast<int64_t>(f.size());
  return fir(replicate_pad(x, K / 2 - (K % 2 == 0 ? 1 : 0), K / 2), f, stride);
}

// z = y + inv·sin²(α·y) per channel.
inline Seq snake(const Seq& y, const std::vector<double>& alpha, const std::vector<double>& inv) {
  Seq z = y;
  for (int64_t i = 0; i < static_cast<int64_t>(z.v.size()); ++i) {
    const int64_t c = i % z.C;
    const double s = std::sin(alpha[c] * y.v[i]);
    z.v[i] = y.v[i] + inv[c] * s * s;
  }
  return z;
}

// BigVGAN Activation1d (r = 2, K = 12).
inline Seq activation1d(const Seq& x, const std::vector<double>& up,
                        const std::vector<double>& down, const std::vector<double>& alpha,
                        const std::vector<double>& inv) {
  return lowpass(snake(upsample(x, up, 2, 5, 15, 15), alpha, inv), down, 2);
}

template <class T>
std::vector<double> to_f64(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

}  // namespace meshnn::test::ref
