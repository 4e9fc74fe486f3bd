#include "layers/layer_norm.h"

#include <cmath>

#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"

namespace meshnn::layers {

LayerNorm::LayerNorm(const Tensor& weight, const Tensor& bias, float eps) : eps_(eps) {
  MESHNN_CHECK_AS(ShapeError, weight.defined() == bias.defined(),
                  "LayerNorm: weight and bias must both be given or both be absent");
  MESHNN_CHECK_AS(ShapeError, weight.defined(), "LayerNorm: weight is required (pass the dim)");
  weight_ = weight.dtype() == DType::f32 ? weight : weight.to(DType::f32);
  bias_ = bias.dtype() == DType::f32 ? bias : bias.to(DType::f32);
  dim_ = weight_.numel();
  MESHNN_CHECK_AS(ShapeError, bias_.numel() == dim_, "LayerNorm: bias has ", bias_.numel(),
                  " values, weight ", dim_);
}

Tensor LayerNorm::forward(const Tensor& x) const {
  x.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, x.rank() >= 1 && x.dim(-1) == dim_, "LayerNorm: input ",
                  shape_str(x.shape()), " does not end in D=", dim_);
  Tensor y = Tensor::empty(x.shape());
  forward_rows(x.data<float>(), x.numel() / dim_, dim_, y.data<float>(), dim_);
  return y;
}

void LayerNorm::forward_rows(const float* src, int64_t M, int64_t lds, float* dst,
                             int64_t ldd) const {
  ProfileScope prof("layer_norm");
  const float* g = weight_.data<float>();
  const float* b = bias_.data<float>();
  const int64_t D = dim_;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < M; ++r) {
    const float* x = src + r * lds;
    float* y = dst + r * ldd;
    double sum = 0;
    for (int64_t i = 0; i < D; ++i) sum += x[i];
    const double mean = sum / static_cast<double>(D);
    double var = 0;
    for (int64_t i = 0; i < D; ++i) {
      const double d = x[i] - mean;
      var += d * d;
    }
    var /= static_cast<double>(D);
    const double rstd = 1.0 / std::sqrt(var + static_cast<double>(eps_));
    for (int64_t i = 0; i < D; ++i) y[i] = static_cast<float>((x[i] - mean) * rstd) * g[i] + b[i];
  }
}

}  // namespace meshnn::layers
