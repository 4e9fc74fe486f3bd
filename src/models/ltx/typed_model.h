// The LTX audio decoder as a typed class (meshnn::LtxAudioDecoder) and its stream
// (StreamingLtxDecoder): what the registry entry (entry.cc) runs behind AudioModel, with the calls
// only this model has (check_run before loading, chunked decode, seeded random checkpoints).
// Internal: programs use AudioModel (meshnn/audio_model.h); the benchmarks and tests use this too.
// Implemented in src/api/audio.cc and src/api/streaming.cc; calls as documented in audio_model.h
// (weights loaded once, runners pooled per device, any number of threads).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/audio_model.h"
#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

// LTX-2.3 (mel-VAE → BigVGAN v2 → bandwidth extension, 48 kHz) and LTX-2 (mel-VAE → HiFi-GAN,
// 24 kHz) audio decode. The version comes from the checkpoint's `config` metadata.
class LtxAudioDecoder {
 public:
  // path: safetensors with ltx-core's key names and the `config` metadata entry. Tensors under
  // the audio prefixes that no layer uses are an error unless allow_unused_tensors (then a
  // warning); other models' tensors in a combined file are always fine.
  // precision: a mode for every stage (Precision::bf16), or per stage —
  // StagePrecision::parse("vae=bf16,vocoder=bf16") or the preset "bf16-safe" (stages vae, vocoder
  // and, for LTX-2.3, bwe; unnamed stages fp32; a stage the version lacks is an InvalidArgument).
  static LtxAudioDecoder load(const std::string& path, const StagePrecision& precision = {},
                              bool allow_unused_tensors = false);
  // A seeded random LTX-2.3 checkpoint at the real architecture (demo, tests, benchmarks).
  static LtxAudioDecoder random_ltx23(uint64_t seed, const StagePrecision& precision = {});
  // Writes that checkpoint to `path` as a safetensors file like the published ones: bf16 tensors
  // (the seeded values are bf16-exact, so load(path) has random_ltx23(seed)'s weights) and the
  // `config` metadata. For benchmarks that hand the same weights to PyTorch.
  static void save_random_ltx23(const std::string& path, uint64_t seed);

  int sample_rate() const;      // 48000 (LTX-2.3) or 24000 (LTX-2)
  std::string version() const;  // "ltx-2.3" | "ltx-2"
  // The stages a per-stage precision may name (vae, vocoder, bwe for LTX-2.3) and the mode each
  // runs at, in chain order.
  std::vector<std::string> precision_stages() const;
  std::vector<Precision> stage_precisions() const;
  int64_t parameters() const;  // weight values in the checkpoint's audio modules
  // Output samples per channel for a latent of `latent_frames` frames.
  int64_t output_samples(int64_t latent_frames) const;
  // Everything about a call that can be checked without weights (latent shape, dtype and
  // finiteness; threads; does the mesh give every device a real latent frame?): throws as
  // decode() would, returns the mesh decode() will use. Call it before load() to fail before the
  // expensive work. decode() also checks the loaded layers' halos (min_frames_per_device()).
  static MeshConfig check_run(const Tensor& latent, const RunOptions& run = {});
  // ShapeError naming the largest mesh that fits when `devices` cannot give every device a real
  // frame of `latent_frames` (the check without weights, as check_run).
  static void check_mesh_fits(int64_t latent_frames, int devices);
  // Latent frames each device of a time split needs: every layer's halo fits in a neighbour's
  // shard (from the loaded model's graph). A mesh that gives a device fewer is a ShapeError.
  int64_t min_frames_per_device() const;
  // The memory rule: a one-shot decode's memory grows with the latent, a chunked one's does not.
  // 0 (one shot) up to 250 latent frames (10 s), else the chunk size to use.
  static int64_t auto_chunk_frames(int64_t latent_frames);

  // latent: (B, 8, T, 16) f32, finite → waveform (B, 2, samples) f32 in [−1, 1] at sample_rate().
  Tensor decode(const Tensor& latent, const RunOptions& run = {}) const;
  // Bounded memory on one device: chunks of `chunk_frames` latent frames, each decoded with
  // enough context that it matches the one-shot decode to f32 rounding (measured max |Δ| ≤ 2e-6,
  // not bit-identical: chunk windows reorder some sums). Same shapes as decode().
  Tensor decode_chunked(const Tensor& latent, int64_t chunk_frames,
                        const RunOptions& run = {}) const;

  struct Impl;

 private:
  friend class StreamingVocoder;  // opens a stream over impl_'s weights
  friend class StreamingLtxDecoder;
  explicit LtxAudioDecoder(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// LTX-2.3 / LTX-2 audio decode as a stream: push latent frames (B, 8, n, 16) → (B, 2, m) at 48
// kHz (24 kHz). The first latent frame yields 1 mel frame, every later one 4 (the decode's
// 4T − 3); frames and look-ahead count latent frames.
class StreamingLtxDecoder : public AudioStream {
 public:
  explicit StreamingLtxDecoder(const LtxAudioDecoder& model, const StreamOptions& options = {});
};

}  // namespace meshnn
