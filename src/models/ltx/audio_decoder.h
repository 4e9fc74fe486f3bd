// LTX-2.3 audio decode (and LTX-2's HiFi-GAN variant): latent → mel-VAE decoder (Stage A) →
// vocoder (Stage B) → bandwidth extension (Stage C) → 48 kHz stereo. docs/models.md describes the
// chain; the PyTorch reference is tools/ltx_audio/model.py.
//
// Every stage runs time-sharded over a TimeShard (one device's even slice of the time axis, halos
// from its neighbours); a default TimeShard is the unsharded path. Layouts are channels-last:
// Stage A (B, T, W = mel bin, C), Stages B/C (B, T, C).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/time_shard.h"
#include "models/common/audio_config.h"
#include "models/common/checkpoint_check.h"
#include "models/common/generator.h"

namespace meshnn::runtime {
struct ChunkChain;
}  // namespace meshnn::runtime

namespace meshnn::models {

// Called after each stage: (stage index 1..n, n, stage name).
using ProgressFn = std::function<void(int, int, const char*)>;

class LtxAudioDecoder {
 public:
  // Reads the config from the checkpoint's `config` metadata (the config wins over defaults; the
  // version is chosen by the presence of config.vocoder.bwe) and loads every weight. Missing keys,
  // wrong shapes and unused audio tensors (common/checkpoint_check.h) are listed together in one
  // WeightError before any weight is read.
  // precision: one mode for every stage, or per stage (precision_stages(); InvalidArgument for a
  // stage this version lacks, before any weight is converted).
  static std::unique_ptr<LtxAudioDecoder> load(const io::SafetensorsFile& file,
                                               const StagePrecision& precision,
                                               const CheckpointCheckOptions& check = {});
  LtxAudioDecoder(const LtxAudioConfig& cfg, const std::map<std::string, Tensor>& state,
                  const StagePrecision& precision);
  ~LtxAudioDecoder();
  // A runner for another device thread: shares every weight (converted and packed once per
  // process), owns its own plans and scratch. Rule: one instance per thread at a time; any number
  // of copies of one loaded decoder may decode concurrently.
  LtxAudioDecoder(const LtxAudioDecoder& other);
  LtxAudioDecoder& operator=(const LtxAudioDecoder&) = delete;

  const LtxAudioConfig& config() const { return cfg_; }
  // The stages a per-stage precision may name, in chain order: vae, vocoder (+ bwe for LTX-2.3).
  static std::vector<std::string> precision_stages(const LtxAudioConfig& cfg);
  // "LTX-2.3" | "LTX-2" (error messages).
  static const char* model_name(const LtxAudioConfig& cfg);
  // The mode each stage was built with (same order as precision_stages()).
  const std::vector<Precision>& stage_precisions() const { return stage_precisions_; }
  int sample_rate() const { return cfg_.output_sampling_rate(); }
  // Output samples per latent frame count T: (4T − 3) · 160 · (3 with BWE | 1.5 for 24 kHz LTX-2).
  int64_t output_samples(int64_t latent_frames) const;

  // latent: (B, 8, T, 16) f32, the same full tensor on every device → (B, samples, 2) f32 waveform,
  // the same on every device. Non-finite latents are rejected with the first bad index.
  Tensor decode(const Tensor& latent, const TimeShard& ts = TimeShard(),
                const ProgressFn& progress = nullptr);

  // Bounded-memory decode on one device: the latent is cut into chunks of `chunk_latent_frames`
  // frames, and each chunk's output is decoded from a window of the input with enough context on
  // both sides (Stage A's causal left field, the vocoder's and BWE's two-sided fields) that the
  // window's cut edges cannot reach the kept rows; sequence ends stay the real ends. Equal to
  // decode() up to f32 rounding; peak memory depends on the chunk size, not on T. latent as for
  // decode(); progress(chunk, chunks, "chunk") after each chunk.
  Tensor decode_chunked(const Tensor& latent, int64_t chunk_latent_frames,
                        const ProgressFn& progress = nullptr);

  // The model's graphs over copies of its layers (graph/graph.h), to run one shot or streamed:
  // the whole chain: latent rows (B, n, 16, 8) channels-last → final samples (B, m, 2) at
  // sample_rate();
  graph::NodePtr graph() const;
  // vocoder (+ BWE for LTX-2.3): packed mel rows (B, n, 128) → final samples (B, m, 2).
  graph::NodePtr vocoder_graph() const;

  // mel: (B, S, 64, 2) → (B, S, 128) with channel s·64 + m (ltx-core's packing).
  static Tensor pack_mel(const Tensor& mel);
  // Stage C's output and the intermediates the tests compare (tests/support/ltx_stages.h).
  struct StageC {
    Tensor log_mel;   // (B, F_s, 128) packed like the BWE generator's input
    Tensor residual;  // (B, 3S, 2)
    Tensor skip;      // (B, 3S, 2)
    Tensor out;       // (B, 3S, 2), clamped
  };

  // Latent frames each device needs at least when the time axis is split: every halo of the
  // chain's graph fits in a neighbour's shard (graph::Node::min_shard_rows).
  int64_t min_frames_per_device() const { return min_frames_; }
  // The rule decode() enforces before any compute (≥ min_frames_per_device() rows each, the last
  // device holding a real frame), as a ShapeError naming the largest device count that fits.
  void check_mesh_fits(int64_t latent_frames, int devices) const;

  // The memory rule: one-shot decode memory grows with the latent length (measured 1.6 GB peak
  // at 2 s, 2.5 GB at 8 s), chunked decode stays flat. Above kAutoChunkAboveFrames latent frames
  // (10 s of audio) the CLI decodes in chunks of kAutoChunkFrames unless told otherwise.
  static constexpr int64_t kAutoChunkAboveFrames = 250;
  static constexpr int64_t kAutoChunkFrames = 125;
  // 0 (one shot) up to kAutoChunkAboveFrames frames, else kAutoChunkFrames.
  static int64_t auto_chunk_frames(int64_t latent_frames);

 private:
  struct MelVae;
  struct Bwe;
  // Shape, dtype and finiteness of a (B, 8, T, 16) latent; throws naming the first bad index.
  void check_latent(const Tensor& latent) const;

  // A stage of the chain: its name (progress reports) and its graph.
  struct Stage {
    const char* name;
    graph::NodePtr node;
  };
  // The chain as graphs over copies of the stages' layers, in order (the one wiring).
  std::vector<Stage> stages() const;
  // decode_chunked's chain: the mel-VAE's 4T − 3 mel frames as the units, each stage's reach
  // (runtime/chunked.h).
  static runtime::ChunkChain chunk_chain(const std::vector<Stage>& chain);
  // The stages one by one and the chunk chain, for the tests (tests/support/ltx_stages.h).
  friend struct LtxDecoderAccess;

  LtxAudioConfig cfg_;
  std::vector<Precision> stage_precisions_;
  std::vector<Stage> chain_;  // decode()'s run of stages(), built on first use
  std::unique_ptr<MelVae> vae_;
  std::unique_ptr<Generator> vocoder_;
  std::unique_ptr<Bwe> bwe_;
  int64_t min_frames_ = 1;  // min_frames_per_device()
};

// A latent's shape as read from a file, checked before any weight is loaded: (8, T, 16) |
// (1, 8, T, 16) → (1, 8, T, 16); batch 1 (ShapeError otherwise: one latent per output file).
Shape ltx_latent_shape(const Shape& shape, const std::string& name);

// (B, C, T, F) NCHW latent → (B, T, F, C) channels-last.
Tensor latent_to_channels_last(const Tensor& latent);

}  // namespace meshnn::models
