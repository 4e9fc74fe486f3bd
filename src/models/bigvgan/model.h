// NVIDIA BigVGAN (v1 / v2 / base configs): config.json + generator state dict → waveform, with the
// mel front end of meldataset.py for copy synthesis from a .wav.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "meshnn/io/safetensors.h"
#include "meshnn/io/torch_checkpoint.h"
#include "models/common/audio_config.h"
#include "models/common/generator.h"
#include "ops/mel.h"

namespace meshnn::models {

// mel: (B, num_mels, T) as BigVGAN takes it → (B, T, num_mels) channels-last rows.
Tensor mel_rows(const Tensor& mel);

// The mel front-end settings of a BigVGAN config.
ops::MelConfig mel_config_of(const BigVganConfig& c);

class BigVgan {
 public:
  // config: the config.json document; state: generator tensors with NVIDIA's names (weight-normed
  // `weight_g`/`weight_v`, folded `weight`, or the parametrisation names), optionally under a
  // "generator." prefix. Every missing, misshaped or unused generator tensor is reported at once
  // (WeightError naming `where`, require_bigvgan_checkpoint) before any layer is built.
  BigVgan(const BigVganConfig& config, const std::map<std::string, Tensor>& state,
          Precision precision, const std::string& where = "BigVGAN checkpoint");
  // Reads the checkpoint (a safetensors file or NVIDIA's torch.save bigvgan_generator.pt, one
  // path: io::read_weight_file); the config comes from `config_path` when given, else from the
  // checkpoint's `config` metadata.
  static std::unique_ptr<BigVgan> load(const io::WeightFile& file, const std::string& config_path,
                                       Precision precision);
  static std::unique_ptr<BigVgan> load(const io::SafetensorsFile& file,
                                       const std::string& config_path, Precision precision);
  // A runner for another thread: shares the weights, owns its plans (see LtxAudioDecoder).
  BigVgan(const BigVgan& other)
      : cfg_(other.cfg_), gen_(std::make_unique<Generator>(*other.gen_)) {}

  const BigVganConfig& config() const { return cfg_; }
  ops::MelConfig mel_config() const { return mel_config_of(cfg_); }
  // mel: (B, num_mels, frames) as BigVGAN takes it, the same full tensor on every device →
  // (B, frames · hop, 1) waveform on every device (time-sharded over `ts` in between).
  Tensor vocode_mel(const Tensor& mel, const TimeShard& ts = TimeShard());
  // Mel frames each device needs at least when the time axis is split: every halo of the
  // generator's graph fits in a neighbour's shard (graph::Node::min_shard_rows).
  int64_t min_frames_per_device() const { return gen_->min_shard_rows(); }
  // The generator graph's reach in mel frames, from the graph built at load.
  graph::Reach reach() const { return gen_->reach(); }
  // Exact streaming over these weights: mel rows (B, n, num_mels) channels-last → final samples
  // (B, m, 1) (graph/graph.h).
  graph::NodePtr graph() const;
  // wav: (T,) mono → log-mel (num_mels, ⌊T/hop⌋) via the front end.
  Tensor mel_of(const Tensor& wav) const;

 private:
  BigVganConfig cfg_;
  std::unique_ptr<Generator> gen_;
};

}  // namespace meshnn::models
