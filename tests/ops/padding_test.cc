#include "meshnn/ops/padding.h"

#include <gtest/gtest.h>

#include "support/golden.h"

namespace meshnn::ops {
namespace {

float at(const Tensor& x, int64_t b, int64_t t, int64_t c) {
  return x.data<float>()[(b * x.dim(1) + t) * x.dim(2) + c];
}

TEST(Padding, ReplicateAndZeroPadT) {
  const Tensor x = test::random_uniform({2, 5, 3}, 11);
  const Tensor r = replicate_pad_t(x, 3, 4);
  const Tensor z = zero_pad_t(x, 3, 4);
  ASSERT_EQ(r.shape(), Shape({2, 12, 3}));
  ASSERT_EQ(z.shape(), Shape({2, 12, 3}));
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 12; ++t)
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t s = std::clamp<int64_t>(t - 3, 0, 4);
        EXPECT_EQ(at(r, b, t, c), at(x, b, s, c));
        EXPECT_EQ(at(z, b, t, c), (t >= 3 && t < 8) ? at(x, b, t - 3, c) : 0.f);
      }
  EXPECT_EQ(replicate_pad_t(x, 0, 0).shape(), x.shape());
}

TEST(Padding, ZeroStuff) {
  const Tensor x = test::random_uniform({1, 4, 7}, 12);
  const Tensor y = zero_stuff_t(x, 3);
  ASSERT_EQ(y.shape(), Shape({1, 10, 7}));
  for (int64_t t = 0; t < 10; ++t)
    for (int64_t c = 0; c < 7; ++c)
      EXPECT_EQ(at(y, 0, t, c), t % 3 == 0 ? at(x, 0, t / 3, c) : 0.f);
}

TEST(Padding, AlignedChannels) {
  EXPECT_EQ(aligned_channels(24, 32), 32);
  EXPECT_EQ(aligned_channels(64, 32), 64);
  EXPECT_EQ(aligned_channels(5, 1), 5);
  EXPECT_THROW(aligned_channels(24, 0), InvalidArgument);
}

TEST(Padding, TpadTailMaskUnsharded) {
  const Tensor x = test::random_uniform({2, 8, 5}, 14);
  Tensor z = x.clone(), r = x.clone();
  set_tpad_tail(z, 0, 6, TailMode::zeros);
  set_tpad_tail(r, 0, 6, TailMode::replicate);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 8; ++t)
      for (int64_t c = 0; c < 5; ++c) {
        EXPECT_EQ(at(z, b, t, c), t < 6 ? at(x, b, t, c) : 0.f);
        EXPECT_EQ(at(r, b, t, c), at(x, b, std::min<int64_t>(t, 5), c));
      }
}

TEST(Padding, TpadTailMaskOnShards) {
  // Global T = 9 padded to 12 over 4 shards of 3: shard 2 holds the last real row (global 8) and
  // shard 3 lies wholly in the tail.
  const Tensor full = test::random_uniform({1, 12, 4}, 15);
  Tensor expect = full.clone();
  set_tpad_tail(expect, 0, 9, TailMode::replicate);
  const Tensor last = full.narrow(1, 8, 1);
  for (int s = 0; s < 4; ++s) {
    Tensor shard = full.narrow(1, 3 * s, 3);
    if (s == 3) {
      Tensor no_fill = shard.clone();
      EXPECT_THROW(set_tpad_tail(no_fill, 9, 9, TailMode::replicate), InvalidArgument);
    }
    set_tpad_tail(shard, 3 * s, 9, TailMode::replicate, s == 3 ? &last : nullptr);
    EXPECT_TRUE(test::bit_equal(shard, expect.narrow(1, 3 * s, 3))) << "shard " << s;
  }
}

TEST(Padding, BadInput) {
  const Tensor x2 = test::random_uniform({4, 5}, 1);
  const Tensor x = test::random_uniform({1, 4, 5}, 1);
  EXPECT_THROW(replicate_pad_t(x2, 1, 1), ShapeError);
  EXPECT_THROW(zero_pad_t(x, -1, 1), InvalidArgument);
  EXPECT_THROW(zero_stuff_t(x, 0), InvalidArgument);
  EXPECT_THROW(replicate_pad_t(Tensor({1, 0, 5}), 1, 1), ShapeError);
  Tensor y = x.clone();
  EXPECT_THROW(set_tpad_tail(y, 0, 0, TailMode::zeros), InvalidArgument);
}

}  // namespace
}  // namespace meshnn::ops
