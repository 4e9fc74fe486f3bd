#include "support/activation_ref.h"

#include "kernels/snake.h"
#include "meshnn/core/error.h"
#include "meshnn/ops/filter_design.h"
#include "meshnn/ops/resample.h"

namespace meshnn::test {

namespace {

void check_x(const layers::AntiAliasedActivation& act, const Tensor& x) {
  MESHNN_CHECK_AS(ShapeError,
                  x.defined() && x.rank() == 3 && x.dtype() == DType::f32 && x.dim(1) >= 1 &&
                      x.dim(2) == act.channels(),
                  act.name(), ": reference needs x of shape (B, T ≥ 1, ", act.channels(),
                  ") f32, got ", x.defined() ? shape_str(x.shape()) : std::string("undefined"));
}

}  // namespace

ops::UpsampleGeometry kaiser_upsample_geometry(int ratio, int kernel_size) {
  MESHNN_CHECK(ratio >= 1, "kaiser_upsample_geometry: ratio must be ≥ 1, got ", ratio);
  MESHNN_CHECK(kernel_size >= ratio, "kaiser_upsample_geometry: kernel_size ", kernel_size,
               " must be ≥ ratio ", ratio);
  ops::UpsampleGeometry g;
  g.ratio = ratio;
  g.kernel_size = kernel_size;
  g.pad = kernel_size / ratio - 1;
  g.pad_left = g.pad * ratio + (kernel_size - ratio) / 2;
  g.pad_right = g.pad * ratio + (kernel_size - ratio + 1) / 2;
  return g;
}

Tensor activation_unfused(const layers::AntiAliasedActivation& act, const Tensor& x,
                          bool prefer_mac) {
  check_x(act, x);
  const Tensor y =
      ops::upsample1d(x, act.up_taps(), kaiser_upsample_geometry(2, kernels::kAaTaps), prefer_mac);
  const Tensor z = layers::snake_forward(y, act.params());
  return ops::downsample1d(z, act.down_taps(), 2, prefer_mac);
}

Tensor activation_scalar(const layers::AntiAliasedActivation& act, const Tensor& x) {
  check_x(act, x);
  const int64_t B = x.dim(0), T = x.dim(1), C = x.dim(2);
  Tensor out = Tensor::empty(x.shape());
  const layers::SnakeParams& p = act.params();
  kernels::aa_snake_fused_f32(x.data<float>(), T * C, B, C, 0, T, T, act.up_taps().data(),
                              act.down_taps().data(), p.alpha.data(), p.inv.data(),
                              out.data<float>(), T * C, kernels::ActIsa::scalar);
  return out;
}

}  // namespace meshnn::test
