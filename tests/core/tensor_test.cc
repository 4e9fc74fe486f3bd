#include "meshnn/core/tensor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "meshnn/core/memory.h"
#include "support/golden.h"

namespace meshnn {
namespace {

TEST(Tensor, OwnedIsAlignedAndZeroed) {
  Tensor t({3, 5, 7});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % kTensorAlignment, 0u);
  EXPECT_EQ(t.numel(), 105);
  EXPECT_EQ(t.nbytes(), 420u);
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.data<float>()[i], 0.f);
  EXPECT_EQ(t.dim(-1), 7);
  EXPECT_THROW(t.dim(3), ShapeError);
  EXPECT_THROW(t.data<double>(), InvalidArgument);
}

TEST(Tensor, CopyIsShallowCloneIsDeep) {
  Tensor a = test::random_uniform({4, 4}, 1);
  Tensor b = a;
  Tensor c = a.clone();
  a.data<float>()[0] = 42.f;
  EXPECT_EQ(b.data<float>()[0], 42.f);
  EXPECT_NE(c.data<float>()[0], 42.f);
}

TEST(Tensor, NarrowAndConcatRoundTrip) {
  Tensor t = test::random_uniform({2, 9, 4}, 3);
  Tensor a = t.narrow(1, 0, 4), b = t.narrow(1, 4, 5);
  Tensor back = concat({a, b}, -2);
  EXPECT_TRUE(test::bit_equal(back, t));
  EXPECT_THROW(concat({a, Tensor({2, 9, 5})}, 1), ShapeError);
}

TEST(Tensor, DtypeConversion) {
  Tensor t = test::random_uniform({64}, 4);
  Tensor h = t.to(DType::bf16);
  Tensor back = h.to(DType::f32);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(back.data<float>()[i], round_to_bf16(t.data<float>()[i]));
  Tensor d = t.to(DType::f64);
  EXPECT_EQ(d.data<double>()[5], static_cast<double>(t.data<float>()[5]));
}

TEST(Tensor, ReshapeChecksCount) {
  Tensor t({2, 6});
  EXPECT_EQ(t.reshape({3, 4}).shape(), (Shape{3, 4}));
  EXPECT_THROW(t.reshape({5}), ShapeError);
  EXPECT_THROW(Tensor({1, 1, 1, 1, 1, 1, 1}), ShapeError);
}

TEST(Compare, ReportsWorstIndex) {
  Tensor a = test::random_uniform({3, 8}, 5);
  Tensor b = a.clone();
  b.data<float>()[13] += 1.f;
  auto r = test::close_rel_l2(a, b, 1e-6, "probe");
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("(1, 5)"), std::string::npos) << r.message();
  EXPECT_TRUE(test::close_rel_l2(a, a, 0.0));
}

}  // namespace
}  // namespace meshnn

namespace meshnn {
namespace {

// The allocation cache's age limit (meshnn/core/memory.h): a block freed and not reused within the
// age is given back by the next sweep; a block reused in time is the same memory again.
TEST(AllocationCache, AgeLimitFreesBlocksNotReused) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the cache is off under ASan";
#else
  if (allocation_cache_stats().limit_bytes == 0) GTEST_SKIP() << "MESHNN_ALLOC_CACHE_MB=0";
  const Shape odd{3, 333331};  // a bucket no other test uses (≈ 4 MB)
  void* first = nullptr;
  {
    Tensor t = Tensor::empty(odd);
    first = t.raw();
  }
  const AllocationCacheStats cached = allocation_cache_stats();
  EXPECT_GE(cached.cached_bytes, 3u * 333331u * 4u);
  {
    Tensor again = Tensor::empty(odd);  // reused: the same block
    EXPECT_EQ(again.raw(), first);
  }
  set_allocation_cache_max_age(0.05);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  const size_t freed = trim_allocation_cache();
  EXPECT_GE(freed, 3u * 333331u * 4u);
  const AllocationCacheStats after = allocation_cache_stats();
  EXPECT_GE(after.evicted_bytes, cached.evicted_bytes + freed);
  EXPECT_EQ(after.max_age_seconds, 0.05);
  set_allocation_cache_max_age(0);
  EXPECT_THROW(set_allocation_cache_max_age(-1), Error);
#endif
}

// A request whose bucket has no free block takes a cached block of up to 4× its size (resident
// already) instead of a fresh one, and that block goes back under its own size.
TEST(AllocationCache, SmallerRequestReusesALargerFreeBlock) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the cache is off under ASan";
#else
  if (allocation_cache_stats().limit_bytes == 0) GTEST_SKIP() << "MESHNN_ALLOC_CACHE_MB=0";
  const Shape big{7, 1428577}, half{7, 714283}, tiny{7, 200003};  // ≈ 40, 20 and 5.6 MB
  void* first = nullptr;
  {
    Tensor t = Tensor::empty(big);
    first = t.raw();
  }
  {
    Tensor t = Tensor::empty(tiny);  // 7× smaller: never served from the big block
    EXPECT_NE(t.raw(), first);
  }
  {
    Tensor t = Tensor::empty(half);  // no free block of its own bucket: the big one
    EXPECT_EQ(t.raw(), first);
    t.fill_zero();  // the whole requested size is usable
  }
  {
    Tensor again = Tensor::empty(big);  // given back under the big bucket: reused for big again
    EXPECT_EQ(again.raw(), first);
  }
#endif
}

}  // namespace
}  // namespace meshnn
