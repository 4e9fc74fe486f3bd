// Depthwise tap filter over time: the same K taps for every channel, valid (no padding), stride s.
// Channels-last rows, so one output row is Σ_k taps[k] · src_row[t·s + k]: K scaled row adds,
// vectorised across C.
#pragma once

#include <cstdint>

namespace meshnn::kernels {

enum class FirImpl {
  fast,         // fused multiply-add accumulation, AVX2 when the CPU has it (dispatched)
  fast_scalar,  // the same accumulation order with std::fma, portable (the fast kernel's reference)
  mac,  // exact multiply-then-add (AVX2 when available, else scalar) in tap order, zero taps
        // skipped (the `prefer_mac` lever form); bit-identical on every ISA because nothing is
        // contracted into an FMA
  mac_scalar,  // the mac form, scalar only (its reference)
};

// src: (B, T_pad, C) f32 → dst: (B, T_out, C) f32, T_out = (T_pad − K)/stride + 1 (caller checked).
void depthwise_fir_f32(const float* src, int64_t B, int64_t T_pad, int64_t C, const float* taps,
                       int K, int stride, float* dst, int64_t T_out, FirImpl impl);

}  // namespace meshnn::kernels
