#include "meshnn/ops/padding.h"

#include <algorithm>
#include <cstring>

namespace meshnn::ops {

void check_btc(const Tensor& x, const char* op) {
  MESHNN_CHECK_AS(ShapeError, x.defined() && x.rank() == 3, op,
                  ": expected x of shape (B, T, C), got ",
                  x.defined() ? shape_str(x.shape()) : std::string("an undefined tensor"));
  x.check_dtype(DType::f32);
}

namespace {

void check_pads(int64_t left, int64_t right, const char* op) {
  MESHNN_CHECK(left >= 0 && right >= 0, op, ": pads must be ≥ 0, got (", left, ", ", right, ")");
}

enum class PadKind { zeros, replicate };

Tensor pad_t(const Tensor& x, int64_t left, int64_t right, PadKind kind, const char* op) {
  check_btc(x, op);
  check_pads(left, right, op);
  const int64_t B = x.dim(0), T = x.dim(1), C = x.dim(2);
  MESHNN_CHECK_AS(ShapeError, kind == PadKind::zeros || T >= 1 || (left == 0 && right == 0), op,
                  ": cannot replicate-pad an empty sequence ", shape_str(x.shape()));
  const int64_t To = left + T + right;
  Tensor y = Tensor::empty({B, To, C});
  const float* src = x.data<float>();
  float* dst = y.data<float>();
  const size_t row = static_cast<size_t>(C) * sizeof(float);
  for (int64_t b = 0; b < B; ++b) {
    const float* xb = src + b * T * C;
    float* yb = dst + b * To * C;
    for (int64_t i = 0; i < left; ++i) {
      if (kind == PadKind::zeros)
        std::memset(yb + i * C, 0, row);
      else
        std::memcpy(yb + i * C, xb, row);
    }
    if (T > 0) std::memcpy(yb + left * C, xb, row * T);
    for (int64_t i = 0; i < right; ++i) {
      float* r = yb + (left + T + i) * C;
      if (kind == PadKind::zeros)
        std::memset(r, 0, row);
      else
        std::memcpy(r, xb + (T - 1) * C, row);
    }
  }
  return y;
}

}  // namespace

Tensor replicate_pad_t(const Tensor& x, int64_t left, int64_t right) {
  return pad_t(x, left, right, PadKind::replicate, "replicate_pad_t");
}

Tensor zero_pad_t(const Tensor& x, int64_t left, int64_t right) {
  return pad_t(x, left, right, PadKind::zeros, "zero_pad_t");
}

Tensor zero_stuff_t(const Tensor& x, int64_t stride) {
  check_btc(x, "zero_stuff_t");
  MESHNN_CHECK(stride >= 1, "zero_stuff_t: stride must be ≥ 1, got ", stride);
  const int64_t B = x.dim(0), T = x.dim(1), C = x.dim(2);
  if (stride == 1) return x;
  const int64_t To = T > 0 ? T * stride - (stride - 1) : 0;
  Tensor y({B, To, C});  // zero-filled
  const float* src = x.data<float>();
  float* dst = y.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      std::memcpy(dst + (b * To + t * stride) * C, src + (b * T + t) * C,
                  static_cast<size_t>(C) * sizeof(float));
  return y;
}

int64_t aligned_channels(int64_t channels, int64_t align) {
  MESHNN_CHECK(align >= 1, "aligned_channels: align must be ≥ 1, got ", align);
  MESHNN_CHECK(channels >= 0, "aligned_channels: channels must be ≥ 0, got ", channels);
  return (channels + align - 1) / align * align;
}

void set_tpad_tail(Tensor& x, int64_t global_row0, int64_t global_T, TailMode mode,
                   const Tensor* fill_row) {
  check_btc(x, "set_tpad_tail");
  MESHNN_CHECK(global_row0 >= 0, "set_tpad_tail: global_row0 must be ≥ 0, got ", global_row0);
  MESHNN_CHECK(global_T >= 1,
               "set_tpad_tail: global_T must be ≥ 1 (a pad image leaves no real rows), got ",
               global_T);
  const int64_t B = x.dim(0), T = x.dim(1), C = x.dim(2);
  const int64_t first_pad =
      std::max<int64_t>(0, std::min(T, global_T - global_row0));  // local index
  if (first_pad >= T) return;                                     // no tail rows here
  float* p = x.data<float>();
  const size_t row = static_cast<size_t>(C) * sizeof(float);
  const int64_t last_local = global_T - 1 - global_row0;  // local index of the last real row
  const float* fill = nullptr;
  if (mode == TailMode::replicate && last_local < 0) {
    MESHNN_CHECK(fill_row != nullptr, "set_tpad_tail: slab at global row ", global_row0,
                 " lies past the last real row ", global_T - 1, "; replicate mode needs fill_row");
    MESHNN_CHECK_AS(ShapeError,
                    fill_row->numel() == B * C &&
                        (fill_row->rank() == 2 || fill_row->rank() == 3) && fill_row->dim(0) == B &&
                        fill_row->dim(-1) == C,
                    "set_tpad_tail: fill_row must be (B, 1, C) = (", B, ", 1, ", C, "), got ",
                    shape_str(fill_row->shape()));
    fill = fill_row->data<float>();
  }
  for (int64_t b = 0; b < B; ++b) {
    float* xb = p + b * T * C;
    const float* src =
        mode == TailMode::zeros ? nullptr : (fill ? fill + b * C : xb + last_local * C);
    for (int64_t t = first_pad; t < T; ++t) {
      if (src)
        std::memcpy(xb + t * C, src, row);
      else
        std::memset(xb + t * C, 0, row);
    }
  }
}

}  // namespace meshnn::ops
