// The LTX audio decode's checkpoint description: the mel-VAE decoder (Stage A) with its latent
// statistics, the vocoder and, for LTX-2.3, the bandwidth extension (Stage C), as tables of
// LayerDesc entries (models/common/audio_description.h: the generator's table is shared with
// BigVGAN). This is the only file that spells the LTX audio keys (audio_vae.*, vocoder.*); the
// checkpoint check, the random checkpoints (random.cc) and the FLOP counts derive from it.
#pragma once

#include <map>
#include <string>

#include "meshnn/core/tensor.h"
#include "models/common/audio_config.h"
#include "models/common/audio_description.h"
#include "models/common/checkpoint_check.h"

namespace meshnn::models {

// The LTX audio VAE decoder (Stage A), with its per-channel statistics.
struct MelVaeWeights {
  struct ResBlock {
    LayerDesc conv1, conv2;
    bool has_shortcut = false;  // a 1×1 conv when the block changes width
    LayerDesc nin_shortcut;
  };
  struct Level {  // run order (the widest first)
    std::vector<ResBlock> blocks;
    bool has_upsample = false;  // every level but the last
    LayerDesc upsample_conv;
  };
  LayerDesc stats_std, stats_mean;  // tensors (z_channels · latent_mel_bins)
  LayerDesc conv_in;
  std::vector<ResBlock> mid;  // 2
  std::vector<Level> levels;
  LayerDesc conv_out;

  template <class F>
  void for_each_layer(F&& f) const {
    f(stats_std);
    f(stats_mean);
    f(conv_in);
    auto res = [&](const ResBlock& r) {
      f(r.conv1);
      f(r.conv2);
      if (r.has_shortcut) f(r.nin_shortcut);
    };
    for (const ResBlock& r : mid) res(r);
    for (const Level& l : levels) {
      for (const ResBlock& r : l.blocks) res(r);
      if (l.has_upsample) f(l.upsample_conv);
    }
    f(conv_out);
  }
};

// The LTX-2.3 bandwidth extension (Stage C): causal STFT and mel bases, BWE generator.
struct BweWeights {
  LayerDesc stft_basis, inverse_stft_basis, mel_basis;  // tensors; decode never reads the inverse
  GeneratorWeights generator;

  template <class F>
  void for_each_layer(F&& f) const {
    f(stft_basis);
    f(inverse_stft_basis);
    f(mel_basis);
    generator.for_each_layer(f);
  }
};

// The whole LTX audio decode (LTX-2.3: mel-VAE + vocoder + BWE; LTX-2: mel-VAE + HiFi-GAN vocoder).
struct LtxWeights {
  MelVaeWeights vae;
  GeneratorWeights vocoder;
  bool has_bwe = false;
  BweWeights bwe;

  template <class F>
  void for_each_layer(F&& f) const {
    vae.for_each_layer(f);
    vocoder.for_each_layer(f);
    if (has_bwe) bwe.for_each_layer(f);
  }
};

// The tables of the LTX weights, and their flat forms.
MelVaeWeights mel_vae_weights(const AudioVaeDecoderConfig& cfg);
BweWeights bwe_weights(const BweConfig& cfg);
LtxWeights ltx_weights(const LtxAudioConfig& cfg);
ModelDesc describe_mel_vae(const AudioVaeDecoderConfig& cfg);
ModelDesc describe_ltx(const LtxAudioConfig& cfg);
// The main vocoder's prefix in an LTX checkpoint.
std::string ltx_vocoder_prefix(const LtxAudioConfig& cfg);
// The BWE generator's prefix in an LTX-2.3 checkpoint.
std::string bwe_generator_prefix();
// True for the keys of an LTX checkpoint's audio modules (the rest of a combined file, e.g. the
// video model, is not ours).
bool is_ltx_audio_key(const std::string& key);
// True for the audio VAE's encoder half (decode never reads it; real files carry it).
bool is_ltx_encoder_key(const std::string& key);

// tensors: every key of the file and its shape.
CheckpointReport check_ltx_checkpoint(const LtxAudioConfig& cfg,
                                      const std::map<std::string, Shape>& tensors);
// Throws WeightError listing every problem (the first 25 of each kind) when problems(opt) > 0;
// with allowed unused tensors, logs them as a warning instead. `where` names the file.
void require_ltx_checkpoint(const LtxAudioConfig& cfg, const std::map<std::string, Shape>& tensors,
                            const CheckpointCheckOptions& opt, const std::string& where);

}  // namespace meshnn::models
