// meshnn's audio models for programs: the LTX-2 / LTX-2.3 audio decoder, NVIDIA BigVGAN and the
// MiniMax-H3 audio VAE.
//
// Life of a call: load() reads a safetensors checkpoint once (mmapped; every missing, unexpected
// or misshaped key reported together) into immutable weights, converted and packed once per
// process. decode() / vocode() run those weights on a mesh of devices: each device gets a runner
// (its own plans, scratch and time shard) over the shared weights. Runners are pooled, so the
// second call with the same mesh is warm (no packing, no JIT).
//
// Threads: a loaded model may be used from any number of threads at once; each call takes its
// own runners, so concurrent calls on one model give the same results as serial ones and share
// the weight memory. A call blocks until its output is ready.
//
// Errors: meshnn::Error subclasses (meshnn/core/error.h): InvalidArgument / ShapeError for bad
// inputs or options, WeightError for checkpoint keys, FormatError for malformed files.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/stage_precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

// Progress of a long call: (done, total, what), e.g. (2, 3, "vocoder"). Called on one thread
// (device 0's) after each stage or chunk; an exception thrown from it ends the call.
using ProgressFn = std::function<void(int done, int total, const std::string& what)>;

// Where and how a call runs.
struct RunOptions {
  // "auto": on the local backend, one device with `threads` OpenMP threads (0 = every core; the
  // fastest set-up measured, docs/benchmarks.md); or "RxC" (time is split over every axis > 1).
  std::string mesh = "auto";
  Backend backend = Backend::local;  // mpi: this process is one rank of an mpiexec launch
  int threads = 0;                   // OpenMP threads per device; 0 = cores / devices
  ProgressFn progress;               // optional
  // Models that run long inputs in chunks with exact context (the LTX decoders): −1 = the model's
  // own rule (mesh "auto": chunks above its memory bound), 0 = one shot, N = chunks of N input
  // frames (one device: mesh "auto" or "1x1"). Other models refuse N > 0.
  int64_t chunk_frames = -1;
};

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
