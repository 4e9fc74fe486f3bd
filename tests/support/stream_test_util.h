// Helpers of the streaming tests: random rows, random cut points, pushing a tensor in pieces.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::test {

// A tensor of `shape` with values uniform in [lo, hi).
inline Tensor random_rows(Shape shape, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Up to n sorted distinct cut points in [1, rows).
inline std::vector<int64_t> random_cuts(int64_t rows, int n, uint64_t seed) {
  std::vector<int64_t> c;
  if (rows < 2) return c;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> u(1, rows - 1);
  for (int i = 0; i < n; ++i) c.push_back(u(rng));
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

// Pushes `in` cut at `cuts` (sorted indices along in_dim), then flushes; the outputs
// concatenated along out_dim (an empty output when nothing came out). Operators take rows along
// dim 1; the public streams take frames along dim 2 and return samples along dim 2.
template <class Stream>
Tensor push_cut(Stream& op, const Tensor& in, const std::vector<int64_t>& cuts, int in_dim = 1,
                int out_dim = 1) {
  std::vector<Tensor> parts;
  auto keep = [&](const Tensor& y) {
    if (y.defined() && y.dim(out_dim) > 0) parts.push_back(y);
  };
  int64_t at = 0;
  std::vector<int64_t> ends = cuts;
  ends.push_back(in.dim(in_dim));
  for (int64_t e : ends) {
    keep(op.push(in.narrow(in_dim, at, e - at)));
    at = e;
  }
  const Tensor tail = op.flush();
  keep(tail);
  return parts.empty() ? tail : concat(parts, out_dim);
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, std::fabs(double(a.data<float>()[i]) - double(b.data<float>()[i])));
  return m;
}

}  // namespace meshnn::test
