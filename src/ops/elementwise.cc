#include "ops/elementwise.h"

#include <omp.h>

#include <cmath>
#include <cstring>

namespace meshnn::ops {
namespace {

void check_same(const Tensor& a, const Tensor& b, const char* what) {
  a.check_dtype(DType::f32);
  b.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, a.shape() == b.shape(), what, ": shape ", shape_str(a.shape()),
                  " vs ", shape_str(b.shape()));
}

}  // namespace

void pixel_norm_silu(const Tensor& x, Tensor& dst, float eps) {
  check_same(x, dst, "pixel_norm_silu");
  MESHNN_CHECK_AS(ShapeError, x.rank() >= 1, "pixel_norm_silu: rank-0 input");
  const int64_t c = x.dim(-1);
  const int64_t rows = c ? x.numel() / c : 0;
  const float* src = x.data<float>();
  float* out = dst.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * c;
    float* d = out + r * c;
    // Sum of squares in double: C is up to 512 and this sets the scale of every output.
    double ss = 0;
    for (int64_t i = 0; i < c; ++i) ss += static_cast<double>(s[i]) * s[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(c) + eps));
    for (int64_t i = 0; i < c; ++i) {
      const float v = s[i] * inv;
      d[i] = v / (1.f + std::exp(-v));
    }
  }
}

namespace {

template <class F>
void map_inplace(Tensor& x, F f) {
  x.check_dtype(DType::f32);
  float* p = x.data<float>();
  const int64_t n = x.numel();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) p[i] = f(p[i]);
}

}  // namespace

Tensor upsample_nearest2x_hw(const Tensor& x) {
  x.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, x.rank() == 4, "upsample_nearest2x_hw: expected (B, H, W, C), got ",
                  shape_str(x.shape()));
  const int64_t b = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  Tensor y = Tensor::empty({b, 2 * h, 2 * w, c});
  const float* s = x.data<float>();
  float* d = y.data<float>();
  const size_t row_bytes = static_cast<size_t>(c) * sizeof(float);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi) {
      const float* src_row = s + (bi * h + hi) * w * c;
      float* dst0 = d + (bi * 2 * h + 2 * hi) * 2 * w * c;
      for (int64_t wi = 0; wi < w; ++wi) {
        std::memcpy(dst0 + (2 * wi) * c, src_row + wi * c, row_bytes);
        std::memcpy(dst0 + (2 * wi + 1) * c, src_row + wi * c, row_bytes);
      }
      std::memcpy(dst0 + 2 * w * c, dst0, 2 * w * row_bytes);
    }
  return y;
}

void leaky_relu_(Tensor& x, float slope) {
  map_inplace(x, [slope](float v) { return v > 0.f ? v : v * slope; });
}
void clamp_(Tensor& x, float lo, float hi) {
  map_inplace(x, [lo, hi](float v) { return v < lo ? lo : (v > hi ? hi : v); });
}
void tanh_(Tensor& x) {
  map_inplace(x, [](float v) { return std::tanh(v); });
}

void add_(Tensor& acc, const Tensor& x) {
  check_same(acc, x, "add_");
  float* a = acc.data<float>();
  const float* b = x.data<float>();
  const int64_t n = acc.numel();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] += b[i];
}

void mean3(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& dst) {
  check_same(a, b, "mean3");
  check_same(a, c, "mean3");
  check_same(a, dst, "mean3");
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  const float* pc = c.data<float>();
  float* d = dst.data<float>();
  const int64_t n = a.numel();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) d[i] = ((pa[i] + pb[i]) + pc[i]) / 3.f;
}

}  // namespace meshnn::ops
