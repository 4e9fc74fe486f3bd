// LayerNorm over the last dim: y = (x − mean) / sqrt(var + eps) · γ + β, var the biased
// (population) variance, as nn.LayerNorm. Row statistics are accumulated in f64 (two passes), so
// the result is the correctly rounded f32 of the exact value up to the final affine step.
#pragma once

#include "meshnn/core/tensor.h"

namespace meshnn::layers {

class LayerNorm {
 public:
  LayerNorm() = default;
  // weight, bias: (D) f32 (γ, β); undefined tensors mean a non-affine norm.
  LayerNorm(const Tensor& weight, const Tensor& bias, float eps);

  int64_t dim() const { return dim_; }
  float eps() const { return eps_; }
  // x: (..., D) f32 → (..., D) f32.
  Tensor forward(const Tensor& x) const;
  // Raw rows: src (M, D) rows `lds` apart → dst (M, D) rows `ldd` apart (may alias src).
  void forward_rows(const float* src, int64_t M, int64_t lds, float* dst, int64_t ldd) const;

 private:
  Tensor weight_, bias_;
  int64_t dim_ = 0;
  float eps_ = 1e-5f;
};

}  // namespace meshnn::layers
