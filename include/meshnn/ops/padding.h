// Padding and masking helpers on channels-last audio activations (B, T, C) f32.
#pragma once

#include <cstdint>

#include "meshnn/core/tensor.h"

namespace meshnn::ops {

// Checks that x is a defined (B, T, C) f32 tensor; ShapeError / dtype error naming `op` otherwise.
void check_btc(const Tensor& x, const char* op);

// x: (B, T, C) → (B, left + T + right, C); the new rows copy x[:, 0] / x[:, T−1]. T ≥ 1.
Tensor replicate_pad_t(const Tensor& x, int64_t left, int64_t right);
// x: (B, T, C) → (B, left + T + right, C) with zero rows.
Tensor zero_pad_t(const Tensor& x, int64_t left, int64_t right);
// x: (B, T, C) → (B, T·stride − (stride − 1), C): stride − 1 zero rows between samples (stride ≥
// 1).
Tensor zero_stuff_t(const Tensor& x, int64_t stride);

// Smallest multiple of `align` ≥ channels (align ≥ 1).
int64_t aligned_channels(int64_t channels, int64_t align);

enum class TailMode { zeros, replicate };
// The t-pad tail mask. A global sequence of `global_T` real rows was padded up to a multiple of the
// device count; `x` (B, T_local, C) holds global rows [global_row0, global_row0 + T_local). Rows
// with global index ≥ global_T are set, in place, to zero (TailMode::zeros) or to the last real row
// (TailMode::replicate). Real rows are untouched (bit-identical). For replicate, the last real row
// comes from `x` when this slab holds it; a slab lying wholly past the end must pass that row as
// `fill_row` ((B, 1, C) or (B, C)), fetched by the caller from the device that holds it.
void set_tpad_tail(Tensor& x, int64_t global_row0, int64_t global_T, TailMode mode,
                   const Tensor* fill_row = nullptr);

}  // namespace meshnn::ops
