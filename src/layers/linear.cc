#include "layers/linear.h"

#include "meshnn/core/error.h"

namespace meshnn::layers {

namespace {
Tensor as_f32(const Tensor& t) {
  if (!t.defined() || t.dtype() == DType::f32) return t;
  return t.to(DType::f32);
}
}  // namespace

Linear Linear::from_out_in(const Tensor& weight, const Tensor& bias, Activation act,
                           Precision precision) {
  Linear l;
  l.prim_ = std::make_unique<dnnl_glue::LinearPrimitive>(
      as_f32(weight), dnnl_glue::LinearPrimitive::WeightLayout::out_in, as_f32(bias), act,
      precision);
  return l;
}

Linear Linear::from_in_out(const Tensor& weight, const Tensor& bias, Activation act,
                           Precision precision) {
  Linear l;
  l.prim_ = std::make_unique<dnnl_glue::LinearPrimitive>(
      as_f32(weight), dnnl_glue::LinearPrimitive::WeightLayout::in_out, as_f32(bias), act,
      precision);
  return l;
}

Linear::Linear(const Linear& other) : prim_(other.prim_ ? other.prim_->fork() : nullptr) {}

Linear& Linear::operator=(const Linear& other) {
  if (this != &other) prim_ = other.prim_ ? other.prim_->fork() : nullptr;
  return *this;
}

Tensor Linear::forward(const Tensor& x) {
  MESHNN_CHECK(defined(), "Linear::forward on an empty layer");
  x.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, x.rank() >= 1 && x.dim(-1) == in_features(), "Linear: input ",
                  shape_str(x.shape()), " does not end in in_features=", in_features());
  Shape out_shape = x.shape();
  out_shape.back() = out_features();
  Tensor y = Tensor::empty(out_shape);
  const int64_t M = x.numel() / in_features();
  forward_rows(x.data<float>(), M, in_features(), y.data<float>(), out_features(), false);
  return y;
}

void Linear::forward_rows(const float* src, int64_t M, int64_t lda, float* dst, int64_t ldd,
                          bool accumulate) {
  prim_->run(src, M, lda, dst, ldd, accumulate);
}

}  // namespace meshnn::layers
