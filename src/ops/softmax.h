// The one row softmax of the project: the one attention (layers::multi_head_attention, which
// GR00T's VL self-attention and DiT and MiniMax-H3's causal attention call) calls it, so all
// models share one rule for NaN, masked keys and summation. A float64 scalar reference is in
// tests/ops/softmax_test.cc; tests/core/one_softmax_test.cc keeps it the only one in src/.
#pragma once

#include <cstdint>

namespace meshnn::ops {

// In place over one row x (n) f32, with an optional key mask key_valid (n bytes, 0 = hidden key;
// null = every key valid). The rule:
//   - max over the valid entries with a NaN-propagating comparison: a NaN in a valid entry (or a
//     +inf, as exp(inf − inf) is NaN) makes every output of the row NaN, like torch.softmax;
//   - p_j = exp(x_j − max) for valid entries, 0 for hidden ones (a hidden entry is never read, so
//     a NaN there does not propagate) and for −inf logits;
//   - the sum accumulated in f64 (removes the order dependence of an f32 sum over ~300 keys),
//     then p_j · f32(1 / sum);
//   - a row whose valid entries are all −inf, or that has no valid entry, becomes zeros: the rule
//     of torch's scaled_dot_product_attention (its `_safe_softmax`, since 2.5), not of
//     torch.softmax (which gives NaN). n == 0 is a no-op.
void softmax_row(float* x, int64_t n, const uint8_t* key_valid = nullptr);

}  // namespace meshnn::ops
