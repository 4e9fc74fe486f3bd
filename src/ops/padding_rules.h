// Padding rules of the conv layers, as (left, right) zero rows per axis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace meshnn::ops {

// Effective kernel extent of a dilated kernel.
inline int64_t effective_kernel(int64_t k, int64_t dilation) { return (k - 1) * dilation + 1; }

// Conv1d: mode "zeros" → (p, p) with p = padding or eff_k // 2 ("same" for odd eff_k);
// "causal" → (eff_k − 1, 0). InvalidArgument for any other mode or a negative padding.
std::pair<int64_t, int64_t> conv1d_pads(int64_t k, int64_t dilation, std::optional<int64_t> padding,
                                        const std::string& mode);

// Conv2d axis a (0 = H, 1 = W) under mode "zeros" | "causal_height" | "causal_width":
// the causal axis gets (eff_k − 1, 0); a non-causal axis of a causal mode gets ltx_core
// CausalConv2d's (⌊(eff_k − 1)/2⌋, rest); "zeros" gets (eff_k // 2, eff_k // 2) as torch's
// padding=k//2. The two rules agree for odd kernels (all LTX call sites); for even ones the
// ltx_core rule keeps the length, a symmetric rule would add a row.
std::pair<int64_t, int64_t> conv2d_pads(int axis, int64_t k, int64_t dilation,
                                        const std::string& mode);

// ConvTranspose1d: PyTorch padding P (default (k − stride) // 2) and output_padding op →
// oneDNN (padding_l, padding_r) = (P, P − op).
std::pair<int64_t, int64_t> conv_transpose1d_pads(int64_t k, int64_t stride,
                                                  std::optional<int64_t> padding,
                                                  int64_t output_padding);

}  // namespace meshnn::ops
