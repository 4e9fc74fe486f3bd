// The models `meshnn serve` loads (`--model NAME=PATH`), over the public API only: any model the
// registry of meshnn::AudioModel knows is served from what its specs say (what it takes and gives,
// whether it encodes, streams or analyses a wave), so a new model needs no line here.
#pragma once

#include <memory>
#include <string>

#include "cli/stream_frame.h"
#include "meshnn/audio_model.h"
#include "serve/body.h"

namespace meshnn::serve {

class ServedModel {
 public:
  // spec "NAME=PATH": PATH whatever AudioModel::load takes (a checkpoint file or a model folder).
  // Loads the weights (once per process).
  static std::shared_ptr<const ServedModel> load(const std::string& spec,
                                                 const StagePrecision& precision);

  const std::string& name() const { return name_; }
  std::string kind_name() const { return model_.variant(); }  // AudioModel::variant()
  int sample_rate() const { return model_.output_spec().sample_rate; }
  // Output channels of one input item (a batch of B items gives B · channels(), one per item).
  int channels() const { return static_cast<int>(model_.output_spec().shape[1]); }
  bool has_encoder() const { return model_.has_encoder(); }
  bool has_stream() const { return model_.can_stream(); }
  // A vocoder (its input is a mel): it answers /vocode as well as /decode.
  bool is_vocoder() const { return model_.input_spec().what == "mel"; }
  const AudioIoSpec& input_spec() const { return model_.input_spec(); }
  // It takes a mono WAV body too (copy synthesis: the model computes its input from it).
  bool takes_wave() const { return model_.has_wave_input(); }
  // float32 values of one item's stream frame (the input's fixed dims; cli/stream_frame.h).
  int64_t frame_size() const;
  // The stream frame for `items` batch items (InvalidArgument when the model takes fewer).
  cli::StreamFrame stream_frame(int64_t items) const;
  double frames_per_second() const;  // input frames per second of output
  // Stream frames pushed at a time: ~1/3 s of audio (the input's frames per second), so a client
  // that leaves mid-message frees the worker soon; the output does not depend on the cut.
  int64_t push_group() const;
  // The JSON entry of GET /v1/models.
  std::string info_json() const;

  // A one-shot body → the model input, checked as the CLI checks it (400 on error): an .npy in
  // the input spec's layout, or a mono WAV (takes_wave()) kept as samples (T,) for run().
  Tensor parse_body(std::string_view body, BodyType type) const;
  // Output seconds the input will give, summed over its output channels (for
  // --max-audio-seconds: 10 s of stereo counts 20 s).
  double output_seconds(const Tensor& input) const;
  // AudioModel::run on mesh auto (the CLI's call: chunked above the model's own bound, if any) →
  // (1, C, S) planar f32 (a batch's (B, 1, S) as (1, B, S): one channel per item).
  // threads: OpenMP threads of the call.
  Tensor run(const Tensor& input, int threads, const ProgressFn& progress) const;
  // --backend mpi (mpi.h): one shot on run's mesh and backend, every rank calling it with the
  // same input (the mesh splits time, so a long input's memory is split too: no chunking).
  // input as parse_body gives it → (1, C, S) planar f32 on every rank.
  Tensor run_on_backend(const Tensor& input, const RunOptions& run) const;

  // /encode: a WAV body → (B, 1, S) samples, checked as audio-encode checks them.
  Tensor parse_encode_body(std::string_view body) const;
  // audio-encode's call: (B, 1, S) → the model's input layout, e.g. (B, C, ⌈S / hop⌉) f32.
  Tensor encode(const Tensor& wave, int threads) const;

  // A stream over the shared weights, on one device (mesh 1x1), as `--stream` opens it. batched:
  // the stream joins this model's StreamGroup, so the pushes of several clients' streams that
  // run at once (several workers) run as one batch on all cores (docs/streaming.md).
  std::shared_ptr<AudioStream> open_stream(int threads, bool batched = false) const;
  // Output seconds of n input frames of `items` items, summed over the output channels (the
  // stream's long-run rate).
  double stream_seconds(int64_t frames, int64_t items) const;

  explicit ServedModel(AudioModel model) : model_(std::move(model)) {}

 private:
  // (B, C, S) from the model → (1, B · C, S) with C = 1 when B > 1.
  Tensor as_planar(Tensor y) const;

  std::string name_, path_, precision_;
  AudioModel model_;
  // The batched streams' group; a batch runs on every core (0 threads): it stands for the pushes
  // of several workers.
  std::shared_ptr<StreamGroup> group_ = std::make_shared<StreamGroup>(2.0, 0);
};

}  // namespace meshnn::serve
