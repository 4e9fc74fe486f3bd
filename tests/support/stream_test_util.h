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

// Pushes `in` (dim 1 = rows) cut at `cuts`, then flushes; the outputs concatenated along dim 1.
template <class Stream>
Tensor push_cut(Stream& op, const Tensor& in, const std::vector<int64_t>& cuts) {
  std::vector<Tensor> parts;
  int64_t at = 0;
  std::vector<int64_t> ends = cuts;
  ends.push_back(in.dim(1));
  for (int64_t e : ends) {
    Tensor y = op.push(in.narrow(1, at, e - at));
    if (y.defined() && y.dim(1) > 0) parts.push_back(y);
    at = e;
  }
  Tensor y = op.flush();
  if (y.defined() && y.dim(1) > 0) parts.push_back(y);
  return concat(parts, 1);
}

inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, std::fabs(double(a.data<float>()[i]) - double(b.data<float>()[i])));
  return m;
}

}  // namespace meshnn::test
