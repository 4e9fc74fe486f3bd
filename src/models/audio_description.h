// One description per audio model: the table of its layers, each with its checkpoint key, its
// geometry (so its tensors' shapes follow from the config) and its place in the model. This is the
// only file that spells the audio models' checkpoint keys; the layers add their own tensor names
// under a key (conv: weight / bias, the CausalConv wrapper's conv.weight; activation: act.alpha,
// act.beta and the two filters). Built from the description:
//   - the models themselves (Generator, the LTX mel-VAE and BWE take their layers from it),
//   - the shapes every checkpoint must have (all problems reported at once),
//   - seeded random checkpoints (models/ltx_random.cc),
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
#include "models/audio_config.h"

namespace meshnn::models {

struct LayerDesc {
  enum class Kind {
    conv1d,            // Conv1d "same" (dilated), weight (C_out, C_in, K)
    conv2d,            // LTX CausalConv2d, weight (C_out, C_in, K, K) under "<key>.conv."
    conv_transpose1d,  // ConvTranspose1d, weight (C_in, C_out, K), padding (K − stride) / 2
    activation,        // anti-aliased Snake / SnakeBeta over C_in channels
    tensor,            // a plain tensor of `shape` (statistics, STFT / mel bases)
  };
  // Where a layer sits in its model (read by the model's constructor).
  enum class Role {
    conv_pre,
    ups,
    convs1,
    convs2,
    acts1,
    acts2,
    act_post,
    conv_post,  // generator
    conv_in,
    res_conv1,
    res_conv2,
    res_shortcut,
    upsample_conv,
    conv_out,  // mel-VAE
    stats_std,
    stats_mean,
    stft_basis,
    inverse_stft_basis,
    mel_basis,  // tensors
  };
  LayerDesc(Kind k, Role r, std::string key_) : kind(k), role(r), key(std::move(key_)) {}
  Kind kind;
  Role role;
  std::string key;  // checkpoint prefix of the layer (no trailing '.'), or the tensor's full key
  int64_t c_in = 0, c_out = 0, kernel = 1, stride = 1, dilation = 1;
  bool bias = true;
  bool snake_beta = true;  // activation: SnakeBeta (else Snake)
  bool logscale = true;    // activation: α (and β) stored as logarithms
  bool optional = false;   // tensor: decode does not read it (real checkpoints carry it)
  Shape shape;             // tensor only
  // Position: generator stage / block (i·R + j) / index m; mel-VAE level (run order) / block.
  int stage = -1, block = -1, index = -1;
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

// BigVGAN / HiFi-GAN generator under `prefix` (e.g. "vocoder.vocoder."; "" for NVIDIA files).
ModelDesc describe_generator(const GeneratorConfig& cfg, const std::string& prefix);
// The LTX audio VAE decoder (Stage A), with its per-channel statistics.
ModelDesc describe_mel_vae(const AudioVaeDecoderConfig& cfg);
// The LTX-2.3 bandwidth extension (Stage C): causal STFT and mel bases, BWE generator.
ModelDesc describe_bwe(const BweConfig& cfg);
// The whole LTX audio decode for a config (LTX-2.3: mel-VAE + vocoder + BWE; LTX-2: mel-VAE +
// HiFi-GAN vocoder).
ModelDesc describe_ltx(const LtxAudioConfig& cfg);
// The main vocoder's prefix in an LTX checkpoint.
std::string ltx_vocoder_prefix(const LtxAudioConfig& cfg);

// The prefix of an NVIDIA BigVGAN generator's keys in `state`: "" or "generator." (checkpoints
// saved as {"generator": state_dict} and flattened), found by where its first layer is.
std::string nvidia_generator_prefix(const std::map<std::string, Tensor>& state,
                                    const GeneratorConfig& cfg);
// The BWE generator's prefix in an LTX-2.3 checkpoint.
std::string bwe_generator_prefix();
// True for the keys of an LTX checkpoint's audio modules (the rest of a combined file, e.g. the
// video model, is not ours).
bool is_ltx_audio_key(const std::string& key);
// True for the audio VAE's encoder half (decode never reads it; real files carry it).
bool is_ltx_encoder_key(const std::string& key);

// Every tensor the description requires (optional ones left out unless asked), key → shape.
std::map<std::string, Shape> required_shapes(const ModelDesc& desc, bool with_optional = false);
// Multiply-adds ×2 of the convolutions for `frames` model input rows.
double flops(const ModelDesc& desc, int64_t frames);
// The layers with `role`, in table order.
std::vector<const LayerDesc*> with_role(const ModelDesc& desc, LayerDesc::Role role);

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
