// Depthwise tap filter (same K taps for every channel) and the BigVGAN / LTX-2 resamplers built on
// it, on channels-last (B, T, C) f32.
#pragma once

#include <cstdint>
#include <span>

#include "meshnn/core/tensor.h"
#include "meshnn/ops/filter_design.h"

namespace meshnn::ops {

// Valid depthwise filter: out[t] = Σ_k taps[k] · x[t·stride + k], per channel.
// x: (B, T_pad, C) f32 → (B, (T_pad − K)/stride + 1, C).
// prefer_mac = false: FMA accumulation (AVX2 when available); true: the exact multiply-then-add
// form (products rounded, added in tap order, zero taps skipped) — same on every ISA. The two agree
// within f32 rounding. Errors: rank ≠ 3 / K > T_pad → ShapeError; K = 0, stride ≤ 0 →
// InvalidArgument.
Tensor depthwise_tap_filter(const Tensor& x, std::span<const float> taps, int stride,
                            bool prefer_mac = false);
// Same, into a preallocated dst of the output shape (no allocation).
void depthwise_tap_filter_into(const Tensor& x, std::span<const float> taps, int stride,
                               Tensor& dst, bool prefer_mac = false);

// BigVGAN UpSample1d / LTX-2 hann UpSample1d: replicate-pad g.pad rows each side, zero-stuff by
// g.ratio, filter with the reversed taps (== conv_transpose1d(stride = ratio)), scale by ratio,
// crop [g.pad_left, len − g.pad_right). Unfused reference path (materialises the stuffed signal).
// x: (B, T, C) f32, taps: (g.kernel_size,) → (B, ratio·T, C).
Tensor upsample1d(const Tensor& x, std::span<const float> taps, const UpsampleGeometry& g,
                  bool prefer_mac = false);

// BigVGAN LowPassFilter1d with padding: replicate-pad (K/2 − (K even), K/2), then a strided
// depthwise filter. x: (B, T, C) → (B, (T + K − 1 − (K even) − K)/stride + 1, C) (= T/stride for
// even K, T % stride == 0).
Tensor lowpass_filter1d(const Tensor& x, std::span<const float> taps, int stride,
                        bool prefer_mac = false);
// BigVGAN DownSample1d(ratio): lowpass_filter1d at stride = ratio. x: (B, r·T, C) → (B, T, C).
inline Tensor downsample1d(const Tensor& x, std::span<const float> taps, int ratio,
                           bool prefer_mac = false) {
  return lowpass_filter1d(x, taps, ratio, prefer_mac);
}

}  // namespace meshnn::ops
