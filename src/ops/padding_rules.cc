#include "ops/padding_rules.h"

#include "meshnn/core/error.h"

namespace meshnn::ops {

std::pair<int64_t, int64_t> conv1d_pads(int64_t k, int64_t dilation, std::optional<int64_t> padding,
                                        const std::string& mode) {
  const int64_t eff = effective_kernel(k, dilation);
  if (mode == "causal") return {eff - 1, 0};
  MESHNN_CHECK(mode == "zeros", "padding_mode must be \"zeros\" or \"causal\", got \"", mode, "\"");
  const int64_t p = padding.value_or(eff / 2);
  MESHNN_CHECK(p >= 0, "padding must be ≥ 0, got ", p);
  return {p, p};
}

std::pair<int64_t, int64_t> conv2d_pads(int axis, int64_t k, int64_t dilation,
                                        const std::string& mode) {
  const int64_t eff = effective_kernel(k, dilation);
  MESHNN_CHECK(mode == "zeros" || mode == "causal_height" || mode == "causal_width",
               "padding_mode must be \"zeros\", \"causal_height\" or \"causal_width\", got \"",
               mode, "\"");
  if (mode == "zeros") return {eff / 2, eff / 2};
  const bool causal_axis = (mode == "causal_height") == (axis == 0);
  if (causal_axis) return {eff - 1, 0};
  return {(eff - 1) / 2, (eff - 1) - (eff - 1) / 2};
}

std::pair<int64_t, int64_t> conv_transpose1d_pads(int64_t k, int64_t stride,
                                                  std::optional<int64_t> padding,
                                                  int64_t output_padding) {
  const int64_t p = padding.value_or((k - stride) / 2);
  MESHNN_CHECK(p >= 0, "ConvTranspose1d padding must be ≥ 0, got ", p);
  // PyTorch: output_padding must be smaller than stride (or dilation).
  MESHNN_CHECK(output_padding >= 0 && output_padding < stride, "output_padding must be in [0, ",
               stride, "), got ", output_padding);
  return {p, p - output_padding};
}

}  // namespace meshnn::ops
