// Small elementwise / normalisation ops of the audio models, channels-last.
// Each has a float64 scalar reference in tests/ops/elementwise_test.cc.
#pragma once

#include "meshnn/core/tensor.h"

namespace meshnn::ops {

// PixelNorm (RMS over channels at each position) fused with SiLU, as the mel-VAE decoder applies
// them back to back: y = silu(x / sqrt(mean_c(x²) + eps)).
// x: (..., C) f32 → same shape. Writes into `dst` (may alias x).
void pixel_norm_silu(const Tensor& x, Tensor& dst, float eps);

// Nearest-neighbour ×2 on H and W of a channels-last 2-D tensor.
// x: (B, H, W, C) → (B, 2H, 2W, C).
Tensor upsample_nearest2x_hw(const Tensor& x);

// y = x > 0 ? x : slope·x, in place. x: any shape f32.
void leaky_relu_(Tensor& x, float slope);
// y = clamp(x, lo, hi), in place.
void clamp_(Tensor& x, float lo, float hi);
// y = tanh(x), in place.
void tanh_(Tensor& x);
// acc += x (same shape), in place.
void add_(Tensor& acc, const Tensor& x);
// dst = ((a + b) + c) / 3 — this exact order is bit-identical to torch's stack().mean(0) on the
// f32 CPU reference (multiplying by a rounded 1/3 is not). All (…) same shape; dst may alias a.
void mean3(const Tensor& a, const Tensor& b, const Tensor& c, Tensor& dst);

}  // namespace meshnn::ops
