// The MiniMax-H3 audio VAE as a typed class (meshnn::MiniMaxH3AudioVae, with its decode and
// encode streams): what the registry entry (entry.cc) runs behind AudioModel. Internal: programs
// use AudioModel (meshnn/audio_model.h); the benchmarks and tests use this too. Implemented in
// src/api/minimax_h3_audio.cc; calls as documented in audio_model.h.
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

namespace api {
struct MiniMaxH3Access;  // the AudioModel registry entry of this model
}

// MiniMax-H3 audio VAE (diffusers `AutoencoderKLMiniMaxH3Audio`, 32 kHz mono per batch item;
// stereo is two batch items, item 0 = left). Neither direction applies latents_mean/latents_std,
// as diffusers' decode/encode do not; normalize()/denormalize() are the pipeline's affine.
//
// Mesh (RunOptions::mesh "RxC"): the batch items never interact, so axis 1 gives each group of
// B / C items its own mesh column, and the columns never communicate while they compute (stereo
// on 1x2: one channel per device); axis 0 splits time inside a column (every layer's halo from
// the time neighbours; encode's causal attention gathers its whole past). When C does not
// divide B (mono on 1x2), time is split over every axis > 1. Every mesh equals 1x1 to f32
// rounding. "auto" is one device (the fastest set-up measured on 2 cores).
// Threads: calls on one model may run from several threads at once; each takes its own graphs.
class MiniMaxH3AudioVae {
 public:
  // folder: a diffusers component folder (config.json naming AutoencoderKLMiniMaxH3Audio +
  // diffusion_pytorch_model.safetensors; weight norm unfolded or folded; f32, bf16 or f16). Every
  // key problem is reported at once (WeightError). parts: which halves to build (a decoder-only
  // or encoder-only model holds about half the weights; calling the other half is an
  // InvalidArgument).
  enum class Parts { both, decoder, encoder };
  static MiniMaxH3AudioVae load(const std::string& folder, Precision precision = Precision::fp32,
                                Parts parts = Parts::both);
  // True when `path` is such a folder (its config.json names this model).
  static bool is_folder(const std::string& path);

  int sample_rate() const;      // 32000
  int hop_length() const;       // 800 samples per latent frame
  int latent_channels() const;  // 32
  std::vector<float> latents_mean() const;
  std::vector<float> latents_std() const;
  // Latent frames each device of a time split needs (decode / encode); a mesh that gives a
  // device fewer is a ShapeError before any work, naming the largest split that fits.
  int64_t min_frames_per_device(bool encode = false) const;

  // latents: (B, C, T) f32, finite, denormalised → (B, 1, hop·T) f32 in [−1, 1]; no trim.
  Tensor decode(const Tensor& latents, const RunOptions& run = {}) const;
  // wave: (B, 1, L) f32, finite, L ≥ 1 → the posterior mode (B, C, ⌈L / hop⌉): zero right-pad to
  // whole hops, never a crop. log_std: when given, receives the log standard deviation, same shape.
  Tensor encode(const Tensor& wave, Tensor* log_std = nullptr, const RunOptions& run = {}) const;
  // Per channel c: z·std[c] + mean[c] (DiT latents → decode input) and its inverse.
  Tensor denormalize(const Tensor& z) const;
  Tensor normalize(const Tensor& z) const;

  // Streaming decode: latent frames pushed a few at a time, samples returned as soon as they are
  // final (the decoder is non-causal: a sample waits for lookahead_frames() more frames). The
  // pushes and the flush concatenated equal decode() of the whole input to f32 rounding, however
  // it is cut (docs/streaming.md). One thread uses a stream at a time; any number of streams may
  // run over one model.
  class DecodeStream {
   public:
    ~DecodeStream();
    DecodeStream(DecodeStream&&) noexcept;
    DecodeStream& operator=(DecodeStream&&) noexcept;
    // latents: (B, C, n) the next n ≥ 0 frames, f32, finite (B fixed by the first push until
    // flush / reset) → (B, 1, m) the m ≥ 0 samples that became final.
    Tensor push(const Tensor& latents);
    // End of the input → (B, 1, rest). The stream is then ready for a new input.
    Tensor flush();
    // Drops the current input without producing its tail.
    void reset();
    int sample_rate() const;
    int64_t samples_per_frame() const;  // hop_length()
    int64_t lookahead_frames() const;   // the graph's right reach, whole frames
    double lookahead_ms() const;
    int64_t frames_pushed() const;     // since the last flush / reset
    int64_t samples_returned() const;  // since the last flush / reset
    std::string mesh() const;
    // Always on the local backend; on MPI only the last pipeline stage's rank receives samples.
    bool returns_output() const;

    struct Impl;

   private:
    friend class MiniMaxH3AudioVae;
    explicit DecodeStream(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
  };
  // run.mesh: "auto" / "1x1" on the calling thread, or "1xN": a pipeline of N devices (the
  // graph's layers cut into N groups of about equal measured cost, as StreamingVocoder's);
  // backend and threads as for decode(). Needs the decoder.
  DecodeStream decode_stream(const RunOptions& run = {}) const;

  // Streaming encode: samples pushed a few at a time, latent frames returned as soon as they are
  // final (the encoder's convs look ahead lookahead_samples() past a frame's own hop; its causal
  // attention keeps the past as a key/value cache). The pushes and the flush concatenated equal
  // encode() of the whole input to f32 rounding, however it is cut; flush() zero-pads the last
  // partial hop as encode() does. One thread uses a stream at a time.
  class EncodeStream {
   public:
    ~EncodeStream();
    EncodeStream(EncodeStream&&) noexcept;
    EncodeStream& operator=(EncodeStream&&) noexcept;
    // wave: (B, 1, n) the next n ≥ 0 samples, f32, finite (B fixed by the first push until
    // flush / reset) → the posterior mode (B, C, m) of the m ≥ 0 frames that became final;
    // log_std, when given, receives their log standard deviation, same shape.
    Tensor push(const Tensor& wave, Tensor* log_std = nullptr);
    // End of the input → the last frames (B, C, rest), the partial hop zero-padded. The stream is
    // then ready for a new input.
    Tensor flush(Tensor* log_std = nullptr);
    // Drops the current input without producing its tail.
    void reset();
    int sample_rate() const;
    int64_t samples_per_frame() const;  // hop_length()
    // Frame t is final once sample hop·t + lookahead_samples() has arrived (the graph's right
    // reach, in samples; 9924 = 310 ms at the released config, 9125 past the frame's own hop).
    int64_t lookahead_samples() const;
    double lookahead_ms() const;
    int64_t samples_pushed() const;   // since the last flush / reset
    int64_t frames_returned() const;  // since the last flush / reset
    std::string mesh() const;
    // Always on the local backend; on MPI only the last pipeline stage's rank receives frames.
    bool returns_output() const;

    struct Impl;

   private:
    friend class MiniMaxH3AudioVae;
    explicit EncodeStream(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
  };
  // run as for decode_stream(). Needs the encoder.
  EncodeStream encode_stream(const RunOptions& run = {}) const;

  struct Impl;

 private:
  friend struct api::MiniMaxH3Access;  // the registry entry reads impl_ (streams, loaded halves)
  explicit MiniMaxH3AudioVae(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace meshnn
