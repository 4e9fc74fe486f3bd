// MiniMax-H3 audio VAE (diffusers `AutoencoderKLMiniMaxH3Audio`): its config.json. Every
// architectural number is in the file; the tensor shapes follow from it (weights.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/common/audio_config.h"

namespace meshnn::models::minimax_h3 {

constexpr const char* kClassName = "AutoencoderKLMiniMaxH3Audio";

struct Config {
  int encoder_dim = 64;
  std::vector<int> encoder_rates{2, 4, 4, 5, 5};
  int latent_dim = 2048;
  int latent_channels = 32;
  int num_attention_heads = 8;
  int decoder_dim = 1024;
  std::vector<int> decoder_rates{5, 5, 2, 2, 2, 2, 2};
  std::vector<int> decoder_kernel_sizes{9, 9, 4, 4, 4, 4, 4};
  std::vector<int> resblock_kernel_sizes{3, 7, 11};
  std::vector<std::vector<int>> resblock_dilation_sizes{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}};
  int sampling_rate = 32000;
  // Per-channel latent statistics: the pipeline's normalisation, never applied by decode/encode.
  std::vector<float> latents_mean, latents_std;

  // Samples per latent frame: the product of encoder_rates (= of decoder_rates).
  int hop() const;
  int head_dim() const { return latent_dim / num_attention_heads; }
  // Width after encoder stage i (0 = conv_in): encoder_dim · 2^i.
  int encoder_width(int i) const { return encoder_dim << i; }
  // InvalidArgument naming `where` and the field for any inconsistent value.
  void validate(const std::string& where) const;
  // The BigVGAN-v2 generator the decoder is (after dec_in_proj), NVIDIA key style.
  GeneratorConfig generator() const;
};

// The config.json document (must name kClassName in `_class_name`). Unknown fields are errors,
// except diffusers' bookkeeping (`_diffusers_version`, `_name_or_path`, …, every '_' key).
Config parse_config(const nlohmann::json& j, const std::string& where);
// True when a config.json document names this model.
bool is_minimax_h3_config(const nlohmann::json& j);

}  // namespace meshnn::models::minimax_h3
