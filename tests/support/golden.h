// Test helpers: compare a result with a reference (relative L2, max abs, PSNR), report the worst
// index with its neighbours on failure, and random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::test {

struct CompareStats {
  double rel_l2 = 0;   // ||a − b|| / ||b||  (b = reference)
  double max_abs = 0;  // max |a − b|
  double psnr_db = 0;  // 20·log10(max|b| / rms(a − b)); +inf when equal
  int64_t worst = -1;  // flat index of max |a − b|
};

// a, b: same shape, any float dtype (converted to f64).
CompareStats compare(const Tensor& actual, const Tensor& expected);
// gtest assertion: shapes equal and rel_l2 ≤ tol; on failure prints stats, the worst index
// (as coordinates) and ±3 neighbours of both tensors along the last dim.
::testing::AssertionResult close_rel_l2(const Tensor& actual, const Tensor& expected, double tol,
                                        const std::string& what = "");
// ||y − ref|| / ||ref|| of an f32 result against a float64 scalar reference of the same size.
double rel_l2_to_f64(const Tensor& y, const std::vector<double>& ref);
// Element-wise bit equality (for sharded == unsharded where the arithmetic is identical).
::testing::AssertionResult bit_equal(const Tensor& actual, const Tensor& expected,
                                     const std::string& what = "");

// Uniform [lo, hi) f32 tensor from a fixed seed (tests are reproducible, never all zeros).
Tensor random_uniform(const Shape& shape, uint64_t seed, float lo = -1.f, float hi = 1.f);
Tensor random_normal(const Shape& shape, uint64_t seed, float stddev = 1.f);

// Path of a committed fixture: tests/fixtures/<name>.
std::string fixture_path(const std::string& name);

}  // namespace meshnn::test
