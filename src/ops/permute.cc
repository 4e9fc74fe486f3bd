#include "ops/permute.h"

#include <cstring>

namespace meshnn::ops {
namespace {

// One output axis after simplification: its length and the input stride (elements) it walks.
struct Axis {
  int64_t size, stride;
};

// axes → the normalised permutation; ShapeError unless it is one of 0 … rank − 1.
std::vector<int> checked_order(const Tensor& x, const std::vector<int>& axes) {
  const int rank = x.rank();
  MESHNN_CHECK_AS(ShapeError, static_cast<int>(axes.size()) == rank, "permute: ", axes.size(),
                  " axes for a tensor of rank ", rank, " ", shape_str(x.shape()),
                  "; give each axis once");
  std::vector<int> order(axes.size());
  std::vector<bool> seen(axes.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int a = axes[i] < 0 ? axes[i] + rank : axes[i];
    MESHNN_CHECK_AS(ShapeError, a >= 0 && a < rank && !seen[static_cast<size_t>(a)],
                    "permute: axis ", axes[i], " at position ", i, " is ",
                    a >= 0 && a < rank ? "given twice" : "out of range", " for rank ", rank,
                    "; the axes must be a permutation of 0 … ", rank - 1);
    seen[static_cast<size_t>(a)] = true;
    order[i] = a;
  }
  return order;
}

// The output axes as (size, input stride), with length-1 axes dropped and output neighbours that
// are also neighbours in the input merged, so a permutation that moves whole rows copies rows.
std::vector<Axis> simplified(const Shape& in, const std::vector<int>& order) {
  std::vector<int64_t> in_stride(in.size(), 1);
  for (int d = static_cast<int>(in.size()) - 2; d >= 0; --d)
    in_stride[static_cast<size_t>(d)] =
        in_stride[static_cast<size_t>(d) + 1] * in[static_cast<size_t>(d) + 1];
  std::vector<Axis> axes;
  for (int a : order) {
    const Axis ax{in[static_cast<size_t>(a)], in_stride[static_cast<size_t>(a)]};
    if (ax.size == 1) continue;
    if (!axes.empty() && axes.back().stride == ax.size * ax.stride) {
      axes.back() = {axes.back().size * ax.size, ax.stride};
    } else {
      axes.push_back(ax);
    }
  }
  return axes;
}

// out (dense, in output order) ← the input walked by `axes`; E is a type of the element's size
// (the bytes are moved, never converted). The last axis is a memcpy when it is contiguous in the
// input, else an element loop over the last two axes; the axes before them advance an odometer.
template <class E>
void copy_walk(const E* src, E* dst, const std::vector<Axis>& axes) {
  const size_t n = axes.size();
  const Axis inner = axes[n - 1];
  const Axis outer = n >= 2 ? axes[n - 2] : Axis{1, 0};
  const size_t lead = n >= 2 ? n - 2 : 0;
  std::vector<int64_t> idx(lead, 0);
  int64_t base = 0;  // input offset of the current outer block
  for (;;) {
    for (int64_t o = 0; o < outer.size; ++o) {
      const E* s = src + base + o * outer.stride;
      if (inner.stride == 1) {
        std::memcpy(dst, s, static_cast<size_t>(inner.size) * sizeof(E));
      } else {
        for (int64_t i = 0; i < inner.size; ++i) dst[i] = s[i * inner.stride];
      }
      dst += inner.size;
    }
    size_t d = lead;
    while (d > 0) {
      --d;
      base += axes[d].stride;
      if (++idx[d] < axes[d].size) break;
      base -= axes[d].stride * axes[d].size;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (lead == 0) return;
  }
}

}  // namespace

// x: any shape and dtype → x with its axes in `axes` order, contiguous.
Tensor permute(const Tensor& x, const std::vector<int>& axes) {
  MESHNN_CHECK_AS(ShapeError, x.defined(), "permute: undefined tensor");
  const std::vector<int> order = checked_order(x, axes);
  Shape shape(order.size());
  for (size_t i = 0; i < order.size(); ++i) shape[i] = x.dim(order[i]);
  Tensor out = Tensor::empty(shape, x.dtype());
  if (out.numel() == 0) return out;
  std::vector<Axis> walk = simplified(x.shape(), order);
  if (walk.empty()) walk.push_back({1, 1});  // every axis of length 1: one element
  switch (dtype_size(x.dtype())) {
    case 1:
      copy_walk(static_cast<const uint8_t*>(x.raw()), static_cast<uint8_t*>(out.raw()), walk);
      break;
    case 2:
      copy_walk(static_cast<const uint16_t*>(x.raw()), static_cast<uint16_t*>(out.raw()), walk);
      break;
    case 4:
      copy_walk(static_cast<const uint32_t*>(x.raw()), static_cast<uint32_t*>(out.raw()), walk);
      break;
    case 8:
      copy_walk(static_cast<const uint64_t*>(x.raw()), static_cast<uint64_t*>(out.raw()), walk);
      break;
    default:
      throw ShapeError(
          detail::concat("permute: unsupported element size of ", dtype_name(x.dtype())));
  }
  return out;
}

// Swaps the last two axes: the same copy both ways.
namespace {
Tensor swap_last_two(const Tensor& x, const char* what) {
  MESHNN_CHECK_AS(ShapeError, x.defined() && x.rank() >= 2, what, ": need at least 2 axes, got ",
                  x.defined() ? shape_str(x.shape()) : "undefined");
  std::vector<int> axes(static_cast<size_t>(x.rank()));
  for (int i = 0; i < x.rank(); ++i) axes[static_cast<size_t>(i)] = i;
  std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
  return permute(x, axes);
}
}  // namespace

// (…, C, T) → (…, T, C)
Tensor interleave(const Tensor& planar) { return swap_last_two(planar, "interleave"); }

// (…, T, C) → (…, C, T)
Tensor deinterleave(const Tensor& interleaved) {
  return swap_last_two(interleaved, "deinterleave");
}

}  // namespace meshnn::ops
