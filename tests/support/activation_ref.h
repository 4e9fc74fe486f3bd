// Test references for AntiAliasedActivation, kept out of the product: the unfused op chain and
// the fused kernel's scalar (non-SIMD) path.
#pragma once

#include "meshnn/core/tensor.h"
#include "meshnn/layers/activation.h"
#include "meshnn/ops/filter_design.h"

namespace meshnn::test {

// BigVGAN's kaiser UpSample1d geometry (the default UpsampleGeometry is r = 2, K = 12):
// pad = K/r − 1, pad_left = pad·r + (K − r)/2, pad_right = pad·r + (K − r + 1)/2.
ops::UpsampleGeometry kaiser_upsample_geometry(int ratio, int kernel_size);

// upsample1d → snake → downsample1d from the separate ops (materialises the 2× signal).
// x: (B, T, C) → (B, T, C)
Tensor activation_unfused(const layers::AntiAliasedActivation& act, const Tensor& x,
                          bool prefer_mac = false);

// The fused kernel forced onto its scalar path, whole sequence with replicate edges.
// x: (B, T, C) → (B, T, C), T ≥ 1
Tensor activation_scalar(const layers::AntiAliasedActivation& act, const Tensor& x);

}  // namespace meshnn::test
