#include "meshnn/core/bf16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace meshnn {
namespace {

// Scalar reference: exact rounding of a double to the nearest bf16 value, ties to even, computed
// from the value itself (not its bits). Returns a float.
float ref_round_bf16(float x) {
  if (std::isnan(x)) return x;
  if (std::isinf(x) || x == 0) return x;
  const double ax = std::abs(static_cast<double>(x));
  int e;
  std::frexp(ax, &e);             // ax = m·2^e, m in [0.5, 1)
  int q = std::max(e - 8, -133);  // bf16 has 8 significant bits; subnormal spacing is 2^-133
  const double ulp = std::ldexp(1.0, q);
  double k = std::floor(ax / ulp);
  const double rem = ax / ulp - k;
  if (rem > 0.5 || (rem == 0.5 && std::fmod(k, 2.0) == 1.0)) k += 1;
  double r = k * ulp;
  if (r > 0x1.fep127 * (1 + 0x1p-9)) r = std::numeric_limits<double>::infinity();
  if (r >= 0x1p128) r = std::numeric_limits<double>::infinity();
  return static_cast<float>(std::signbit(x) ? -r : r);
}

TEST(Bf16, EdgeCases) {
  EXPECT_EQ(round_to_bf16(1.0f), 1.0f);
  // Ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 → even (1).
  EXPECT_EQ(round_to_bf16(1.0f + 0x1p-8f), 1.0f);
  // 1 + 3·2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6 → even (1 + 2^-6).
  EXPECT_EQ(round_to_bf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);
  EXPECT_EQ(round_to_bf16(-1.0f - 0x1p-8f), -1.0f);
  // Subnormals round on the bf16 grid (2^-133 spacing).
  const float sub = std::numeric_limits<float>::denorm_min() * 12345;
  EXPECT_EQ(round_to_bf16(sub), ref_round_bf16(sub));
  EXPECT_TRUE(std::isinf(round_to_bf16(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isinf(round_to_bf16(-std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A signalling NaN whose payload lives only in the low bits must stay NaN, not become inf.
  EXPECT_TRUE(std::isnan(round_to_bf16(f32_from_bits(0x7f800001u))));
  // The largest finite f32 rounds up to inf in bf16.
  EXPECT_TRUE(std::isinf(round_to_bf16(std::numeric_limits<float>::max())));
  EXPECT_EQ(f32_bits(round_to_bf16(-0.0f)), 0x80000000u);
}

TEST(Bf16, MatchesScalarReferenceOnRandomBits) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000000; ++i) {
    const float x = f32_from_bits(rng());
    if (std::isnan(x)) continue;
    ASSERT_EQ(f32_bits(round_to_bf16(x)), f32_bits(ref_round_bf16(x))) << "x bits " << f32_bits(x);
  }
}

// Property: hi + lo == x exactly for every finite f32 (sampled densely over all exponents, plus
// the extremes), and hi is a bf16 value.
TEST(Bf16, SplitIsExact) {
  std::mt19937 rng(99);
  auto check = [](float x) {
    const SplitBf16 s = split_bf16(x);
    ASSERT_EQ(s.hi + s.lo, x) << "x bits " << f32_bits(x);
    ASSERT_EQ(f32_bits(s.hi) & 0xffffu, 0u);
    ASSERT_TRUE(std::isfinite(s.lo));
  };
  for (int i = 0; i < 4000000; ++i) {
    const float x = f32_from_bits(rng());
    if (std::isfinite(x)) check(x);
  }
  for (uint32_t b : {0x7f7fffffu, 0xff7fffffu, 0x7f7f8000u, 0x7f7f7fffu, 0x00000001u, 0x807fffffu,
                     0x00800000u, 0x3f808000u})
    check(f32_from_bits(b));
}

}  // namespace
}  // namespace meshnn
