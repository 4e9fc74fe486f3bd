// The layers of a model description entry (audio_description.h), weights from a state dict.
// Kept apart from the description itself so that the config fuzzers link the tables without the
// convolution engine.
#include "models/common/audio_description.h"

namespace meshnn::models {

Conv1d build_conv1d(const LayerDesc& d, const std::map<std::string, Tensor>& state, Precision p) {
  Conv1dConfig c;
  c.in_channels = d.c_in;
  c.out_channels = d.c_out;
  c.kernel_size = d.kernel;
  c.dilation = d.dilation;
  c.bias = d.bias;
  c.precision = p;
  Conv1d conv(c, d.key);
  conv.load(state, d.key);
  return conv;
}

ConvTranspose1d build_conv_transpose1d(const LayerDesc& d,
                                       const std::map<std::string, Tensor>& state, Precision p) {
  ConvTranspose1dConfig c;
  c.in_channels = d.c_in;
  c.out_channels = d.c_out;
  c.kernel_size = d.kernel;
  c.stride = d.stride;
  c.precision = p;
  ConvTranspose1d conv(c, d.key);
  conv.load(state, d.key);
  return conv;
}

Conv2d build_causal_conv2d(const LayerDesc& d, const std::map<std::string, Tensor>& state,
                           Precision p) {
  Conv2dConfig c;
  c.in_channels = d.c_in;
  c.out_channels = d.c_out;
  c.kernel_size = {d.kernel, d.kernel};
  c.padding_mode = "causal_height";
  c.precision = p;
  Conv2d conv(c, d.key);
  conv.load(state, d.key);  // accepts the wrapper's inner conv.weight
  return conv;
}

layers::AntiAliasedActivation build_activation(const LayerDesc& d,
                                               const std::map<std::string, Tensor>& state) {
  layers::AntiAliasedActivation a(
      d.key + ".", d.c_in, d.snake_beta ? layers::SnakeKind::snake_beta : layers::SnakeKind::snake,
      d.logscale);
  a.load_state_dict(state, d.key + ".");
  return a;
}

Tensor tensor_of(const LayerDesc& d, const std::map<std::string, Tensor>& state) {
  auto it = state.find(d.key);
  if (it == state.end()) throw WeightError("missing checkpoint key '" + d.key + "'");
  MESHNN_CHECK_AS(WeightError, it->second.shape() == d.shape, "checkpoint key '", d.key,
                  "' has shape ", shape_str(it->second.shape()), ", expected ", shape_str(d.shape));
  return it->second.dtype() == DType::f32 ? it->second : it->second.to(DType::f32);
}

}  // namespace meshnn::models
