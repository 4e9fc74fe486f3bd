// NVIDIA BigVGAN as a typed class (meshnn::BigVganVocoder) and the vocoder stream
// (StreamingVocoder, over BigVGAN or the LTX decoder's vocoder): what the registry entry (entry.cc)
// runs behind AudioModel. Internal: programs use AudioModel (meshnn/audio_model.h); the benchmarks
// and tests use this too. Implemented in src/api/audio.cc and src/api/streaming.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "meshnn/audio_model.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"

namespace meshnn {
namespace graph {
struct Reach;  // graph/graph.h
}  // namespace graph

class LtxAudioDecoder;  // models/ltx/typed_model.h

// NVIDIA BigVGAN (v1 / v2 / base configs; also copy synthesis through its mel front end).
class BigVganVocoder {
 public:
  // checkpoint: NVIDIA's folder (config.json + bigvgan_generator.pt, or a converted
  // bigvgan_generator.safetensors), or a weights file — safetensors, or a torch.save .pt read by
  // the weights-only reader (io/torch_checkpoint.h) — with NVIDIA's generator names (weight-normed
  // or folded), optionally under "generator."; config_path: the model's config.json, "" = the
  // folder's, else the checkpoint's `config` metadata, else the config.json beside it.
  // precision: a mode, or "vocoder=mode" (its one stage; other stages and the LTX presets are an
  // InvalidArgument).
  static BigVganVocoder load(const std::string& checkpoint, const std::string& config_path = "",
                             const StagePrecision& precision = {});

  int sample_rate() const;
  int num_mels() const;
  int hop_length() const;           // output samples per mel frame
  std::string config_json() const;  // the config as parsed (JSON text)
  // Mel frames each device of a time split needs: every layer's halo fits in a neighbour's shard
  // (from the generator's graph). A mesh that gives a device fewer is a ShapeError.
  int64_t min_frames_per_device() const;
  // The generator graph's reach in mel frames (chunk windows: runtime/chunked.h).
  graph::Reach reach() const;

  // mel: (B, num_mels, frames) f32, finite → (B, 1, frames · hop_length) f32, as BigVGAN.forward.
  Tensor vocode(const Tensor& mel, const RunOptions& run = {}) const;
  // wav: (T,) mono f32 at sample_rate() → log-mel (num_mels, ⌊T / hop⌋) f32, as meldataset.py.
  Tensor mel_spectrogram(const Tensor& wav) const;

  struct Impl;

 private:
  friend class StreamingVocoder;
  explicit BigVganVocoder(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

class StreamingVocoder : public AudioStream {
 public:
  // NVIDIA BigVGAN: push mel frames (B, num_mels, n) → (B, 1, m) samples at sample_rate().
  explicit StreamingVocoder(const BigVganVocoder& model, const StreamOptions& options = {});
  // The LTX vocoder (BigVGAN v2 + bandwidth extension for LTX-2.3, HiFi-GAN for LTX-2): push mel
  // frames (B, 2, n, 64) as the mel-VAE decodes them (stereo, time, mel bin) → (B, 2, m).
  explicit StreamingVocoder(const LtxAudioDecoder& model, const StreamOptions& options = {});
};

}  // namespace meshnn
