// Configs of the audio models, parsed from checkpoint metadata (LTX) or config.json (NVIDIA
// BigVGAN). The checkpoint's values win over code defaults; unknown architecture fields are errors.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace meshnn::models {

// A BigVGAN/HiFi-GAN-style generator: conv_pre → [ups[i] → mean of resblocks] × N → post →
// conv_post.
struct GeneratorConfig {
  enum class Block { amp1, amp2, hifigan1 };  // AMPBlock1, AMPBlock2, HiFi-GAN ResBlock1
  enum class Act { snake, snakebeta };
  enum class KeyStyle {
    ltx,
    nvidia
  };  // acts1/acts2, ups.i.weight  vs  activations.m, ups.i.0.weight
  int in_channels = 128;
  int out_channels = 2;
  int upsample_initial_channel = 1536;
  std::vector<int> upsample_rates;
  std::vector<int> upsample_kernel_sizes;
  std::vector<int> resblock_kernel_sizes;
  std::vector<std::vector<int>> resblock_dilation_sizes;
  Block block = Block::amp1;
  Act activation = Act::snakebeta;
  bool snake_logscale = true;
  bool use_tanh_at_final = false;
  bool use_bias_at_final = false;
  bool apply_final_activation = true;  // false: raw conv_post output (LTX BWE generator)
  KeyStyle keys = KeyStyle::ltx;
  int sampling_rate = 16000;  // output rate
  // HiFi-GAN (LTX-2 19B) slopes: 0.1 inside, PyTorch's default 0.01 after the last stage.
  float lrelu_slope = 0.1f;
  float post_lrelu_slope = 0.01f;

  int num_stages() const { return static_cast<int>(upsample_rates.size()); }
  int stage_channels(int i) const { return upsample_initial_channel >> (i + 1); }
  int hop() const;  // product of upsample_rates
  void validate(const std::string& where) const;
};

// NVIDIA BigVGAN config.json (v1/v2): generator + mel front end.
struct BigVganConfig {
  GeneratorConfig generator;
  int n_fft = 1024, hop_size = 256, win_size = 1024, num_mels = 100;
  double fmin = 0, fmax = 0;  // 0 = sr/2
};
BigVganConfig parse_bigvgan_config(const nlohmann::json& j, const std::string& where);

// LTX audio VAE decoder (ddconfig).
struct AudioVaeDecoderConfig {
  int ch = 128;
  std::vector<int> ch_mult{1, 2, 4};
  int num_res_blocks = 2;
  int z_channels = 8;
  int out_ch = 2;
  int mel_bins = 64;             // output mel bins
  int latent_mel_bins = 16;      // mel_bins / 2^(levels−1)
  float pixel_norm_eps = 1e-6f;  // the decoder builds PixelNorm with 1e-6
};

struct BweConfig {
  GeneratorConfig generator;
  int input_sampling_rate = 16000;
  int output_sampling_rate = 48000;
  int hop_length = 80;
  int n_fft = 512;
  int num_mels = 64;
};

struct LtxAudioConfig {
  enum class Version { ltx2, ltx23 };  // ltx2 = 19B HiFi-GAN at 24 kHz; ltx23 = BigVGAN v2 + BWE
  Version version = Version::ltx23;
  AudioVaeDecoderConfig vae;
  GeneratorConfig vocoder;
  BweConfig bwe;  // only for ltx23
  int output_sampling_rate() const {
    return version == Version::ltx23 ? bwe.output_sampling_rate : vocoder.sampling_rate;
  }
};
// `config` is the checkpoint's metadata JSON (keys "audio_vae", "vocoder"). Version rule of
// ltx-core: `vocoder.bwe` present → LTX-2.3, never the file name.
LtxAudioConfig parse_ltx_audio_config(const nlohmann::json& config, const std::string& where);
// Whether a checkpoint's config carries the LTX audio sections (a cheap look, no validation: the
// model registry's test before it loads the checkpoint as an LTX decoder).
bool is_ltx_audio_config(const nlohmann::json& config);
// The real LTX-2.3 config (for the demo's random checkpoint and tests), as checkpoint JSON.
nlohmann::json ltx23_reference_config();

}  // namespace meshnn::models
