// One way in for every audio model: AudioModel::load(path) finds the model from what the path
// holds (a checkpoint's config metadata, a config.json beside it, a diffusers folder) through the
// registry of models meshnn knows, and runs it whatever it is: one shot, chunked, streamed or
// encoded. The models themselves (src/models/<family>/) are internal.
//
// Life of a call: load() reads the checkpoint once (mmapped; every missing, unexpected or
// misshaped key reported together) into immutable weights, converted and packed once per process.
// run() / encode() run those weights on a mesh of devices: each device gets a runner (its own
// plans, scratch and time shard) over the shared weights. Runners are pooled, so the second call
// with the same mesh is warm (no packing, no JIT).
//
// Threads: a loaded model may be used from any number of threads at once; each call takes its
// own runners, so concurrent calls on one model give the same results as serial ones and share
// the weight memory. A call blocks until its output is ready. A stream is used by one thread at
// a time (AudioStream below).
//
// Errors: meshnn::Error subclasses (meshnn/core/error.h): InvalidArgument / ShapeError for bad
// inputs or options, WeightError for checkpoint keys, FormatError for malformed files, and
// InUseError ("in use") for a stream call while another thread's runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
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
  // Models that run long inputs in chunks with exact context (the LTX decoders, BigVGAN): −1 =
  // the model's own rule (LTX with mesh "auto": chunks above its memory bound; BigVGAN: one
  // shot), 0 = one shot, N = chunks of N input frames (one device: mesh "auto" or "1x1"). Other
  // models refuse N > 0.
  int64_t chunk_frames = -1;
};

// Streaming: input frames pushed a few at a time, audio returned as soon as it is final.
//
// The concatenation of every push() and the flush() equals the one-shot run of the whole input
// (to f32 rounding: measured max |Δ| ≤ 4e-6 on outputs in [−1, 1]; docs/streaming.md), for any way
// of cutting the input, down to one frame per push. Each layer carries exactly the history its
// receptive field needs, so the work and memory per pushed frame stay constant however long the
// stream runs.
//
// Latency: a non-causal model (convolutions that pad both sides, as the vocoders') makes the
// samples of frame t final only once `lookahead_frames()` more frames have arrived; flush()
// returns the rest. Causal layers add none.
//
// Mesh: "1x1" runs the whole model on one device, on the calling thread. "1xN" is a pipeline: the
// model's layers are cut into N groups of about equal measured cost, group k runs on device k, and
// the activations pass from device to device through the collective layer. push() then hands the
// frames to the first device and returns the samples that have left the last one so far (it
// blocks only while the pipeline is full); flush() waits for the rest. A pipeline raises a
// stream's throughput where time-sharding a small chunk cannot; it does not lower the latency.
//
// Threads: one call at a time per stream. push(), flush() and reset() claim the stream for the
// call: a call from a second thread while one runs throws InUseError ("this stream is in use by
// another thread") and leaves the stream as it was; calls that take turns from several threads
// are safe. The counters (frames_pushed, samples_returned) are read without the claim. Any number
// of streams may run at once over one loaded model (they share its weights).
//
// Batching: streams made with the same StreamGroup (StreamOptions::group) — streams of one model,
// each created, started and pushed on its own — run their pushes that arrive together as one
// batch: a push waits up to the group's window for the pushes of the group's other streams, and
// those of the same size and the same phase run stacked along B, every layer's filters read once
// for all of them; each stream keeps its own history and gets its own output (equal to the
// stream run alone; docs/streaming.md). Other pushes run alone; flushes stack like pushes; a
// reset runs at once.
class StreamGroup {
 public:
  // window_ms: how long a push waits for the other streams' pushes; threads: the batches' threads
  // (0 = all cores), also their lanes: the pushes of a batch are dealt to lanes of one thread each
  // that run side by side (a batch of one push gets every thread).
  explicit StreamGroup(double window_ms = 2.0, int threads = 0);
  ~StreamGroup();
  StreamGroup(const StreamGroup&) = delete;
  StreamGroup& operator=(const StreamGroup&) = delete;
  // Batched pushes run so far (each of ≥ 2 streams), the pushes inside them, the pushes run alone.
  int64_t batches() const;
  int64_t batched_pushes() const;
  int64_t solo_pushes() const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct StreamOptions {
  std::string mesh = "1x1";          // "1x1", or "1xN" for an N-stage pipeline
  Backend backend = Backend::local;  // mpi: this process is one rank (stage) of an mpiexec launch
  int threads = 0;                   // OpenMP threads per device; 0 = cores / devices
  // Pipeline only: the frames per push the stages are balanced for (the cost of a layer does not
  // grow in proportion to the rows of a push, so a cut balanced for 8 frames is not for 32).
  // 0 = the model's default (32 mel frames for a vocoder, 8 latent frames for the LTX decoder).
  int64_t push_frames = 0;
  // Streams of one model made with the same group batch their pushes (one device, local backend;
  // the group's threads replace `threads`). A stream of another model or stage throws
  // InvalidArgument.
  std::shared_ptr<StreamGroup> group;
};

// A stream over a model (AudioModel::stream / stage_stream).
class AudioStream {
 public:
  ~AudioStream();
  AudioStream(AudioStream&&) noexcept;
  AudioStream& operator=(AudioStream&&) noexcept;

  // Each of push / flush / reset throws InUseError while another thread's call runs.
  // frames: the next n ≥ 0 frames in the model's input layout (input_spec()), f32, finite →
  // (B, C, m) the m ≥ 0 samples that became final.
  Tensor push(const Tensor& frames);
  // End of the input → the remaining samples. The stream is then ready for a new input.
  Tensor flush();
  // Drops the current input (pending frames and history) without producing its tail.
  void reset();

  int sample_rate() const;
  int64_t samples_per_frame() const;  // output samples per input frame (in the long run)
  int64_t lookahead_frames() const;   // frames an output sample waits for beyond its own
  double lookahead_ms() const;        // the same in milliseconds of input
  int64_t frames_pushed() const;      // since the last flush / reset
  int64_t samples_returned() const;   // since the last flush / reset
  std::string mesh() const;           // the mesh it runs on, e.g. "1x2"
  // Whether this process receives the samples: always on the local backend; on MPI only the
  // last stage's rank (the others return (B, C, 0) tensors).
  bool returns_output() const;

  struct Impl;

 protected:
  explicit AudioStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// What a model takes or gives: a (…, T, …) f32 tensor with one free time axis.
struct AudioIoSpec {
  std::string what;              // "latent" | "mel" | "wave"
  std::vector<int64_t> shape;    // −1 where any size is accepted (the time axis; B where free)
  int time_axis = 0;             // the axis of T in `shape`
  double frames_per_second = 0;  // rows of the time axis per second of audio
  int sample_rate = 0;           // waves: samples per second; 0 otherwise
  std::string layout() const;    // e.g. "(1, 8, T, 16)" or "(B, 1, T)"
  // The shape of `seconds` of audio in this layout: T = max(1, round(seconds · frames_per_second))
  // (round half to even, as Python's round), B = items where the batch axis (0) is free, 1 on
  // any other free axis; InvalidArgument for items > 1 when the batch is fixed.
  std::vector<int64_t> example_shape(double seconds, int64_t items = 1) const;
  // A seeded example input of that shape: standard normal f32 values from std::mt19937_64(seed)
  // (the demo's latent, serve's GET …/example).
  Tensor example(double seconds, uint64_t seed, int64_t items = 1) const;
};

struct AudioModelOptions {
  StagePrecision precision;   // a mode for every stage, a preset or stage=mode pairs
  std::string config_path;    // a config.json for a checkpoint without one ("" = find it)
  bool allow_unused = false;  // LTX: accept a checkpoint with extra tensors beside the audio ones
  // Load only what encode() needs (a VAE's encoder, about half its weights); run() and stream()
  // then refuse. A model without an encoder is refused before its weights are read.
  bool encoder_only = false;
  // Load only what run() and stream() need (a VAE's decoder); encode() then refuses. A model
  // that only decodes loads the same either way.
  bool decoder_only = false;
  // Config fields meshnn does not know are logged (warn) and ignored instead of refused (known
  // fields are checked either way; meshnn/io/config_policy.h). The CLI's --allow-unknown-config.
  bool allow_unknown_config = false;
  // Load as this registered model (a name of registered()) without asking the others: the model's
  // own loader reads the path and reports its own errors. "" = the first that recognises it.
  std::string model;
};

// A registered model as the registry describes it before any path is given (AudioModel::catalog):
// what a program needs to pick a model by what it does and to list the models in its help.
struct AudioModelEntry {
  std::string name;          // as registered(), e.g. "ltx-audio-decoder"
  std::string input;         // what run() takes (input_spec().what): "latent" | "mel"
  std::string path;          // what a path of it is, in a few words (for help texts)
  bool has_encoder = false;  // encode() (when its encoder is loaded)
  bool has_random = false;   // random() builds it
  // With has_random: the input_spec() of the model random() builds, known before building it (a
  // program checks its input for it first, e.g. with check_input("", …) and options.model).
  AudioIoSpec random_input;
};

// A stream into a model's encoder: samples pushed a few at a time, latent frames out as soon as
// they are final; the pushes and the flush concatenated equal encode() to f32 rounding however
// the input is cut. One thread uses a stream at a time.
class AudioEncodeStream {
 public:
  // wave: (B, 1, n), n ≥ 0 (B fixed until flush) → the frames (B, C, m) that became final;
  // log_std, when given, receives their posterior log std (same shape).
  Tensor push(const Tensor& wave, Tensor* log_std = nullptr);
  // End of the input → the last frames (the partial hop zero-padded, as encode() pads).
  Tensor flush(Tensor* log_std = nullptr);
  // Drops the current input without producing its tail.
  void reset();
  bool returns_output() const;        // false on MPI ranks that do not hold the output
  int64_t lookahead_samples() const;  // samples past a frame's own hop it waits for
  double lookahead_ms() const;
  int sample_rate() const;            // of the pushed wave
  int64_t samples_per_frame() const;  // the hop: wave samples per latent frame
  std::string mesh() const;           // the mesh the stream runs on, e.g. "1x1"

  struct Impl;
  explicit AudioEncodeStream(std::unique_ptr<Impl> impl);
  ~AudioEncodeStream();
  AudioEncodeStream(AudioEncodeStream&&) noexcept;
  AudioEncodeStream& operator=(AudioEncodeStream&&) noexcept;

 private:
  std::unique_ptr<Impl> impl_;
};

class AudioModel {
 public:
  // path: a checkpoint file or a model folder. The first registered model that recognises it
  // loads it; when none does, the error says for each why not.
  static AudioModel load(const std::string& path, const AudioModelOptions& options = {});
  // The registered models, in the order load() asks them, e.g. "ltx-audio-decoder".
  static std::vector<std::string> registered();
  // The registered models described, in the same order.
  static std::vector<AudioModelEntry> catalog();
  // The registry name of the model load() would take `path` for, from its files' headers (no
  // weights read); the InvalidArgument of load() when none would.
  static std::string identify(const std::string& path, const AudioModelOptions& options = {});
  // The files load() reads for `path` (the checkpoint, config.json, the weights, …), from their
  // names, without reading them: what a program must never write over (the CLI refuses an output
  // that is one of them). The InvalidArgument of load() when no model takes `path`.
  static std::vector<std::string> files(const std::string& path,
                                        const AudioModelOptions& options = {});
  // The checks run() makes that need no weights — the input's shape, the mesh and chunking it
  // asks for — for the model load() would take `path` for (its files' headers only): what a
  // program runs before it spends the load. input: the shape run() would get. With options.model
  // set, `path` may be "": that model's checks, no file read (the input of a random() model).
  static void check_input(const std::string& path, const std::vector<int64_t>& input,
                          const RunOptions& run, const AudioModelOptions& options = {});
  // The registered model `model` with seeded random weights at its released size (demos, tests,
  // benchmarks; options.precision as for load). InvalidArgument when `model` is not registered or
  // cannot build random weights.
  static AudioModel random(const std::string& model, uint64_t seed,
                           const AudioModelOptions& options = {});

  std::string model() const;        // the registry name of the model
  std::string variant() const;      // what the checkpoint is: "ltx-2.3", "ltx-2", "bigvgan", …
  std::string description() const;  // e.g. "LTX-2.3 audio decoder (mel-VAE → BigVGAN v2 → BWE)"
  // The model's config as loaded (JSON text: a checkpoint's `config` metadata or its config.json).
  std::string config_json() const;
  // The stages a per-stage precision may name, each with the mode it runs at, in chain order
  // (empty for a model that runs one precision everywhere: MiniMax-H3).
  std::vector<std::pair<std::string, Precision>> stage_precisions() const;
  // Weight values of the model's modules (InvalidArgument for a model that does not count them).
  int64_t parameters() const;
  const AudioIoSpec& input_spec() const;   // what run() takes (and encode() returns)
  const AudioIoSpec& output_spec() const;  // what run() returns (and encode() takes)
  bool has_encoder() const;
  bool can_stream() const;
  // A vocoder that computes its own input from a wave (copy synthesis: BigVGAN's mel spectrogram).
  bool has_wave_input() const;
  // samples: (S,) mono f32 at output_spec().sample_rate → run()'s input (1, …, T) (InvalidArgument
  // when the model has no such analysis).
  Tensor input_from_wave(const Tensor& samples) const;
  // Output samples of run() on `frames` input frames.
  int64_t output_samples(int64_t frames) const;
  // The input frames per chunk run() uses for `frames` frames under `run` (0 = one shot).
  int64_t chunk_frames(int64_t frames, const RunOptions& run) const;

  // input: input_spec() → output_spec(), as the CLI's command for the model runs it (for the LTX
  // decoder with mesh "auto": chunked with bounded memory above its memory bound (250
  // latent frames, as audio-decode does).
  Tensor run(const Tensor& input, const RunOptions& options = {}) const;
  // run() with options.chunk_frames = chunk_frames ≥ 1: on one device in chunks of that many
  // input frames (bounded memory; equal to one shot to f32 rounding). InvalidArgument for a
  // model that does not run in chunks.
  Tensor run_chunked(const Tensor& input, int64_t chunk_frames,
                     const RunOptions& options = {}) const;
  // wave: output_spec() → input_spec(): the model's encoder (InvalidArgument when it has none);
  // log_std, when given, receives the posterior's log std (same shape as the result).
  Tensor encode(const Tensor& wave, const RunOptions& options = {},
                Tensor* log_std = nullptr) const;
  // An encode stream over the shared weights (InvalidArgument when the model has no encoder).
  AudioEncodeStream encode_stream(const RunOptions& options = {}) const;
  // A latent model's per-channel statistics (MiniMax-H3: the pipeline's latents_mean /
  // latents_std): normalize_latents(z) = (z − mean) / std, denormalize_latents its inverse, on
  // (B, C, T). InvalidArgument for a model without them.
  bool has_latent_statistics() const;
  Tensor normalize_latents(const Tensor& z) const;
  Tensor denormalize_latents(const Tensor& z) const;
  // The statistics themselves, one value per latent channel (empty without them).
  std::vector<float> latents_mean() const;
  std::vector<float> latents_std() const;
  // A stream over the shared weights (InvalidArgument when the model cannot stream).
  AudioStream stream(const StreamOptions& options = {}) const;
  // A stream that enters the model's chain at `stage` (a stage of stage_precisions(), e.g. the
  // LTX decoder's "vocoder": mels in, the rest of the chain run): InvalidArgument naming the
  // stages that stream when `stage` is not one.
  AudioStream stage_stream(const std::string& stage, const StreamOptions& options = {}) const;

  struct Impl;

 private:
  explicit AudioModel(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace meshnn
