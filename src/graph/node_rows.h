// Row helpers shared by the graph's node files (internal).
#pragma once

#include <cstdint>
#include <utility>

#include "meshnn/core/tensor.h"

namespace meshnn::graph {

// ⌈a / b⌉ for b > 0 and any sign of a.
inline int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// (B, 0, …) with the trailing dims of `shape`.
inline Tensor no_rows(Shape shape) {
  shape[1] = 0;
  return Tensor::empty(std::move(shape));
}

}  // namespace meshnn::graph
