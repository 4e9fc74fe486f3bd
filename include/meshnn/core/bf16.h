// bfloat16 conversion and the exact f32 = hi + lo split used by the bf16x2 / bf16x3 precision
// modes.
#pragma once

#include <cstdint>
#include <cstring>

namespace meshnn {

// Raw bf16 storage: the upper 16 bits of an IEEE f32.
struct bf16 {
  uint16_t bits = 0;
};

inline uint32_t f32_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// f32 → bf16, round to nearest, ties to even. NaN stays NaN (quiet bit forced so that rounding
// can never carry a NaN payload into an infinity); overflow rounds to ±inf as IEEE requires.
inline bf16 to_bf16(float x) {
  uint32_t u = f32_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<uint16_t>((u >> 16) | 0x0040u)};
  const uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return bf16{static_cast<uint16_t>(u >> 16)};
}
inline float to_f32(bf16 h) { return f32_from_bits(static_cast<uint32_t>(h.bits) << 16); }
inline float round_to_bf16(float x) { return to_f32(to_bf16(x)); }

// The exact split x = hi + lo with hi a bf16 value and lo the f32 residual.
// For every finite x, hi + lo == x exactly in f32: hi is x rounded to 8 significant bits, so
// x − hi has at most 16 significant bits and is representable. Finite x beyond the largest bf16
// (|x| > 0x1.fep127) would round hi to inf; hi saturates to the largest finite bf16 there so the
// identity still holds.
struct SplitBf16 {
  float hi;
  float lo;
};
inline SplitBf16 split_bf16(float x) {
  float hi = round_to_bf16(x);
  const uint32_t ax = f32_bits(x) & 0x7fffffffu;
  if (ax < 0x7f800000u && (f32_bits(hi) & 0x7fffffffu) == 0x7f800000u) {
    hi = f32_from_bits((f32_bits(x) & 0x80000000u) | 0x7f7f0000u);
  }
  return SplitBf16{hi, x - hi};
}

}  // namespace meshnn
