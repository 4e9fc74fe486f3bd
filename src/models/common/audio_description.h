// The description framework every audio model's checkpoint is read through: a table of layers,
// each with its checkpoint key, its geometry (so its tensors' shapes follow from the config) and
// its place in the model, and the shared generator table (BigVGAN, HiFi-GAN and the LTX vocoders
// use it; this file spells the generator's keys). Each family's own tables live in its folder
// (models/ltx/weights.h for the LTX mel-VAE and BWE). The layers add their own tensor names under
// a key (conv: weight / bias, the CausalConv wrapper's conv.weight; activation: act.alpha,
// act.beta and the two filters). Built from a description:
//   - the models themselves (Generator, the LTX mel-VAE and BWE take their layers from it),
//   - the shapes every checkpoint must have (all problems reported at once),
//   - seeded random checkpoints (models/ltx/random.cc),
//   - multiply-add counts (flops()).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/activation.h"
#include "meshnn/layers/conv.h"
#include "models/common/audio_config.h"

namespace meshnn::models {

struct LayerDesc {
  enum class Kind {
    conv1d,            // Conv1d "same" (dilated), weight (C_out, C_in, K)
    conv2d,            // LTX CausalConv2d, weight (C_out, C_in, K, K) under "<key>.conv."
    conv_transpose1d,  // ConvTranspose1d, weight (C_in, C_out, K), padding (K − stride) / 2
    activation,        // anti-aliased Snake / SnakeBeta over C_in channels
    tensor,            // a plain tensor of `shape` (statistics, STFT / mel bases)
  };
  LayerDesc() = default;
  LayerDesc(Kind k, std::string key_) : kind(k), key(std::move(key_)) {}
  Kind kind = Kind::tensor;
  std::string key;  // checkpoint prefix of the layer (no trailing '.'), or the tensor's full key
  int64_t c_in = 0, c_out = 0, kernel = 1, stride = 1, dilation = 1;
  bool bias = true;
  bool snake_beta = true;  // activation: SnakeBeta (else Snake)
  bool logscale = true;    // activation: α (and β) stored as logarithms
  bool optional = false;   // tensor: decode does not read it (real checkpoints carry it)
  Shape shape;             // tensor only
  // Position: generator stage / block (i·R + j) / index m; mel-VAE level (run order) / block.
  int stage = -1, block = -1, index = -1;
  // Geometry the receptive-field walk needs: a layer of one of a generator stage's parallel
  // residual blocks (`block` says which); the mel-VAE's conv after its nearest ×2 upsample.
  bool parallel = false;
  bool upsample = false;
  double rate = 1;    // input rows per model input row (FLOP counts)
  int64_t width = 1;  // conv2d: mel bins at this level (FLOP counts)
  // Random checkpoints: weights N(0, init_std²); bias N(0, 0.02²), or the constant init_bias.
  double init_std = 0;
  double init_bias = std::numeric_limits<double>::quiet_NaN();

  Shape weight_shape() const;
  // Every tensor the layer reads, with the name a checkpoint writes (the first accepted spelling).
  std::map<std::string, Shape> tensors() const;
};

using ModelDesc = std::vector<LayerDesc>;

// Entry constructors for a model's description: any convolution (channels, kernel, random-init
// scale, time rate) and a plain tensor.
LayerDesc conv_layer(LayerDesc::Kind kind, std::string key, int64_t ci, int64_t co, int64_t k,
                     double init_std, double rate);
LayerDesc tensor_layer(std::string key, Shape shape, bool optional = false);

// The weights of each audio model as a struct of named layers (gemma.cpp's ForEachTensor shape):
// the model's constructor takes its layers by name, and for_each_layer(f) walks every one in
// table order (the order a checkpoint lists them and random checkpoints draw them), from which
// the flat ModelDesc below — and with it the checkpoint check, random init and FLOP counts —
// derives. F: void(const LayerDesc&).

// BigVGAN / HiFi-GAN generator.
struct GeneratorWeights {
  // One residual block: per dilation m, convs1[m] (+ convs2[m]) with its activations (AMP1:
  // acts1[m] before convs1[m], acts2[m] before convs2[m]; AMP2: acts1[m] only; HiFi-GAN: none).
  struct Block {
    std::vector<LayerDesc> convs1, convs2, acts1, acts2;
  };
  struct Stage {
    LayerDesc up;               // the transposed conv
    std::vector<Block> blocks;  // run in parallel, averaged
  };
  LayerDesc conv_pre;
  std::vector<Stage> stages;
  bool has_act_post = false;  // HiFi-GAN: a plain leaky ReLU, no weights
  LayerDesc act_post, conv_post;

  template <class F>
  void for_each_layer(F&& f) const {
    f(conv_pre);
    for (const Stage& s : stages) {
      f(s.up);
      for (const Block& b : s.blocks)
        for (size_t m = 0; m < b.convs1.size(); ++m) {
          f(b.convs1[m]);
          if (!b.convs2.empty()) f(b.convs2[m]);
          if (!b.acts1.empty()) f(b.acts1[m]);
          if (!b.acts2.empty()) f(b.acts2[m]);
        }
    }
    if (has_act_post) f(act_post);
    f(conv_post);
  }
};

// Under `prefix` (e.g. "vocoder.vocoder."; "" for NVIDIA files).
GeneratorWeights generator_weights(const GeneratorConfig& cfg, const std::string& prefix);

// The flat tables: every layer of the weights in for_each_layer order.
template <class W>
ModelDesc flatten(const W& w) {
  ModelDesc out;
  w.for_each_layer([&](const LayerDesc& d) { out.push_back(d); });
  return out;
}
ModelDesc describe_generator(const GeneratorConfig& cfg, const std::string& prefix);

// The prefix of an NVIDIA BigVGAN generator's keys in `state`: "" or "generator." (checkpoints
// saved as {"generator": state_dict} and flattened), found by where its first layer is.
std::string nvidia_generator_prefix(const std::map<std::string, Tensor>& state,
                                    const GeneratorConfig& cfg);

// Every tensor the description requires (optional ones left out unless asked), key → shape.
std::map<std::string, Shape> required_shapes(const ModelDesc& desc, bool with_optional = false);
// Multiply-adds ×2 of the convolutions for `frames` model input rows.
double flops(const ModelDesc& desc, int64_t frames);

// Layers built from a description entry, weights read from `state` in any accepted spelling
// (WeightError naming the key when missing or misshaped).
Conv1d build_conv1d(const LayerDesc& d, const std::map<std::string, Tensor>& state, Precision p);
ConvTranspose1d build_conv_transpose1d(const LayerDesc& d,
                                       const std::map<std::string, Tensor>& state, Precision p);
// LTX CausalConv2d: time (H) zero pad K − 1 in front, mel (W) ⌊(K − 1)/2⌋ | rest.
Conv2d build_causal_conv2d(const LayerDesc& d, const std::map<std::string, Tensor>& state,
                           Precision p);
layers::AntiAliasedActivation build_activation(const LayerDesc& d,
                                               const std::map<std::string, Tensor>& state);
// A Kind::tensor entry as f32, shape-checked.
Tensor tensor_of(const LayerDesc& d, const std::map<std::string, Tensor>& state);

}  // namespace meshnn::models
