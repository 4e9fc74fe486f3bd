// ops::permute, the one layout op, against a scalar reference: random shapes of rank 1 … 6 with
// random permutations and random values, every dtype a Tensor holds (the bytes are moved, so the
// result is bit-identical), identity orders, negative axes, length-0 and length-1 axes, and the
// errors for axes that are not a permutation. f32 values are checked against a float64 copy.
#include "ops/permute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace meshnn::ops {
namespace {

// Row-major strides of `s` (elements).
std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d)
    st[static_cast<size_t>(d)] = st[static_cast<size_t>(d) + 1] * s[static_cast<size_t>(d) + 1];
  return st;
}

// For each output element (row-major over the permuted shape), the input element it comes from:
// the definition out[i0, …, in] = x[j] with j[axes[k]] = ik, by brute force.
std::vector<int64_t> source_index(const Shape& in, const std::vector<int>& axes) {
  Shape out(axes.size());
  for (size_t k = 0; k < axes.size(); ++k) out[k] = in[static_cast<size_t>(axes[k])];
  const std::vector<int64_t> in_st = strides_of(in);
  const int64_t n = shape_numel(out);
  std::vector<int64_t> src(static_cast<size_t>(n));
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t rem = e, j = 0;
    for (int k = static_cast<int>(out.size()) - 1; k >= 0; --k) {
      idx[static_cast<size_t>(k)] = rem % out[static_cast<size_t>(k)];
      rem /= out[static_cast<size_t>(k)];
    }
    for (size_t k = 0; k < out.size(); ++k) j += idx[k] * in_st[static_cast<size_t>(axes[k])];
    src[static_cast<size_t>(e)] = j;
  }
  return src;
}

Tensor random_bytes(const Shape& s, DType dt, std::mt19937_64& rng) {
  Tensor t = Tensor::empty(s, dt);
  auto* p = static_cast<uint8_t*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng() | 1u);  // never 0
  if (dt == DType::boolean)
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  return t;
}

// Random shape of `rank` with lengths 1 … 7 (length 1 is where axes merge or vanish).
Shape random_shape(int rank, std::mt19937_64& rng) {
  Shape s(static_cast<size_t>(rank));
  for (int64_t& d : s) d = 1 + static_cast<int64_t>(rng() % 7);
  return s;
}

TEST(Permute, F32MatchesAFloat64ReferenceOnRandomShapes) {
  std::mt19937_64 rng(33);
  std::uniform_real_distribution<double> val(-3.0, 3.0);
  for (int trial = 0; trial < 400; ++trial) {
    const int rank = 1 + trial % 4;
    const Shape s = random_shape(rank, rng);
    std::vector<int> axes(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    std::vector<double> ref(static_cast<size_t>(shape_numel(s)));
    for (double& v : ref) v = val(rng);
    Tensor x = Tensor::empty(s);
    for (size_t i = 0; i < ref.size(); ++i) x.data<float>()[i] = static_cast<float>(ref[i]);
    const Tensor y = permute(x, axes);
    ASSERT_EQ(y.rank(), rank);
    for (int k = 0; k < rank; ++k) ASSERT_EQ(y.dim(k), s[static_cast<size_t>(axes[k])]);
    const std::vector<int64_t> src = source_index(s, axes);
    for (size_t e = 0; e < src.size(); ++e)
      ASSERT_EQ(static_cast<double>(y.data<float>()[e]),
                static_cast<double>(static_cast<float>(ref[static_cast<size_t>(src[e])])))
          << shape_str(s) << " element " << e;
  }
}

TEST(Permute, EveryDtypeAndRankUpToSixIsABitExactCopy) {
  std::mt19937_64 rng(34);
  const DType dtypes[] = {DType::f32, DType::bf16, DType::f16, DType::f64,
                          DType::i64, DType::i32,  DType::u8,  DType::boolean};
  for (int trial = 0; trial < 240; ++trial) {
    const DType dt = dtypes[trial % 8];
    const int rank = 1 + (trial / 8) % kMaxRank;
    const Shape s = random_shape(rank, rng);
    std::vector<int> axes(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    const Tensor x = random_bytes(s, dt, rng);
    const Tensor y = permute(x, axes);
    ASSERT_EQ(y.dtype(), dt);
    const size_t es = dtype_size(dt);
    const std::vector<int64_t> src = source_index(s, axes);
    const auto* xp = static_cast<const uint8_t*>(x.raw());
    const auto* yp = static_cast<const uint8_t*>(y.raw());
    for (size_t e = 0; e < src.size(); ++e)
      ASSERT_EQ(std::memcmp(yp + e * es, xp + static_cast<size_t>(src[e]) * es, es), 0)
          << dtype_name(dt) << " " << shape_str(s) << " element " << e;
  }
}

TEST(Permute, IdentityIsAFreshCopyAndNegativeAxesCountFromTheEnd) {
  std::mt19937_64 rng(35);
  const Tensor x = random_bytes({3, 5, 4}, DType::f32, rng);
  const Tensor id = permute(x, {0, 1, 2});
  ASSERT_EQ(id.shape(), x.shape());
  EXPECT_NE(id.raw(), x.raw());
  EXPECT_EQ(std::memcmp(id.raw(), x.raw(), x.nbytes()), 0);
  const Tensor a = permute(x, {2, 0, 1}), b = permute(x, {-1, -3, -2});
  ASSERT_EQ(b.shape(), (Shape{4, 3, 5}));
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
  // The inverse order brings the input back.
  const Tensor back = permute(a, {1, 2, 0});
  EXPECT_EQ(std::memcmp(back.raw(), x.raw(), x.nbytes()), 0);
}

TEST(Permute, EmptyAndScalarLikeShapes) {
  const Tensor e = permute(Tensor::empty({2, 0, 3}), {2, 1, 0});
  EXPECT_EQ(e.shape(), (Shape{3, 0, 2}));
  const Tensor one = Tensor::from_vector<float>({1.5f}, {1, 1, 1});
  const Tensor p = permute(one, {1, 2, 0});
  EXPECT_EQ(p.data<float>()[0], 1.5f);
}

TEST(Permute, AxesThatAreNotAPermutationAreAShapeError) {
  const Tensor x = Tensor::empty({2, 3, 4});
  EXPECT_THROW(permute(x, {0, 1}), ShapeError);        // too few
  EXPECT_THROW(permute(x, {0, 1, 2, 3}), ShapeError);  // too many
  EXPECT_THROW(permute(x, {0, 1, 3}), ShapeError);     // out of range
  EXPECT_THROW(permute(x, {0, 1, -4}), ShapeError);    // out of range from the end
  EXPECT_THROW(permute(x, {0, 2, 2}), ShapeError);     // twice
  EXPECT_THROW(permute(x, {0, -3, 2}), ShapeError);    // -3 is 0, given twice
  EXPECT_THROW(permute(Tensor(), {}), ShapeError);
}

TEST(Permute, InterleaveAndDeinterleaveSwapTheLastTwoAxes) {
  std::mt19937_64 rng(36);
  const Tensor planar = random_bytes({2, 3, 1000}, DType::f32, rng);  // (B, C, T)
  const Tensor frames = interleave(planar);
  ASSERT_EQ(frames.shape(), (Shape{2, 1000, 3}));
  const float* p = planar.data<float>();
  const float* f = frames.data<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 1000; ++t)
      for (int64_t c = 0; c < 3; ++c)
        ASSERT_EQ(std::memcmp(&f[(b * 1000 + t) * 3 + c], &p[(b * 3 + c) * 1000 + t], 4), 0);
  const Tensor again = deinterleave(frames);
  EXPECT_EQ(again.shape(), planar.shape());
  EXPECT_EQ(std::memcmp(again.raw(), planar.raw(), planar.nbytes()), 0);
  EXPECT_THROW(interleave(Tensor::empty({5})), ShapeError);
  EXPECT_THROW(deinterleave(Tensor()), ShapeError);
}

}  // namespace
}  // namespace meshnn::ops
