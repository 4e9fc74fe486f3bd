// The models `meshnn serve` loads (`--model NAME=PATH`), over the public API only: what each one
// takes and gives, and the one-shot and streaming calls the workers make on it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cli/serve_body.h"
#include "meshnn/audio.h"
#include "meshnn/streaming.h"

namespace meshnn::serve {

enum class ModelKind { ltx, bigvgan, minimax_h3 };

class ServedModel {
 public:
  // spec "NAME=PATH": PATH a checkpoint file or a model folder (config.json beside a
  // .safetensors, as BigVGAN.from_pretrained takes it; or a MiniMax-H3 audio VAE diffusers folder,
  // whose config.json names AutoencoderKLMiniMaxH3Audio). The kind is the loader that accepts the
  // file: LtxAudioDecoder (a file with its audio config) unless a config.json is beside it, else
  // BigVganVocoder. Loads the weights (once per process).
  static std::shared_ptr<const ServedModel> load(const std::string& spec,
                                                 const StagePrecision& precision);

  const std::string& name() const { return name_; }
  ModelKind kind() const { return kind_; }
  std::string kind_name() const;  // "ltx-2.3" | "ltx-2" | "bigvgan" | "minimax-h3"
  int sample_rate() const { return sample_rate_; }
  // Output channels (MiniMax-H3: one per latent batch item, so per request; 1 here).
  int channels() const { return kind_ == ModelKind::ltx ? 2 : 1; }
  bool has_encoder() const { return kind_ == ModelKind::minimax_h3; }
  bool has_stream() const { return kind_ != ModelKind::minimax_h3; }
  int64_t frame_size() const;        // float32 values per stream frame (128 or num_mels)
  double frames_per_second() const;  // input frames per second of output
  // The JSON entry of GET /v1/models.
  std::string info_json() const;

  // A one-shot body → the model input, checked as the CLI checks it (400 on error). A WAV body
  // (BigVGAN copy synthesis) is kept as samples; its mel is computed by run() on the worker.
  Tensor parse_body(std::string_view body, BodyType type) const;
  // Output seconds the input will give (for --max-audio-seconds).
  double output_seconds(const Tensor& input) const;
  // The CLI's call for this input → (1, C, S) planar f32: audio-decode's (one shot up to 10 s,
  // chunks above, mesh auto; MiniMax-H3: (B, 1, S) as (1, B, S)) or vocode's (mesh 1x1).
  // threads: OpenMP threads of the call.
  Tensor run(const Tensor& input, int threads, const ProgressFn& progress) const;
  // --backend mpi (serve_mpi.h): one shot on run's mesh and backend, every rank calling it with the
  // same input (the mesh splits time, so a long input's memory is split too: no chunking).
  // input as parse_body gives it → (1, C, S) planar f32 on every rank.
  Tensor run_on_mesh(const Tensor& input, const RunOptions& run) const;

  // /encode (MiniMax-H3): a WAV body → (B, 1, S) samples, checked as audio-encode checks them.
  Tensor parse_encode_body(std::string_view body) const;
  // audio-encode's call: (B, 1, S) → the posterior mode (B, C, ⌈S / hop⌉) f32.
  Tensor encode(const Tensor& wave, int threads) const;

  // A stream over the shared weights, on one device (mesh 1x1), as `--stream` opens it.
  // (shared_ptr: it deletes the concrete stream type; AudioStream's destructor is not virtual.)
  std::shared_ptr<AudioStream> open_stream(int threads) const;
  // (n, frame_size) frames → the stream's input layout.
  Tensor frames_to_input(const Tensor& frames) const;
  // Output seconds of n input frames (the stream's long-run rate).
  double stream_seconds(int64_t frames) const;

 private:
  std::string name_, path_, precision_;
  ModelKind kind_ = ModelKind::bigvgan;
  int sample_rate_ = 0;
  std::optional<LtxAudioDecoder> ltx_;
  std::optional<BigVganVocoder> bigvgan_;
  std::optional<MiniMaxH3AudioVae> h3_;
};

}  // namespace meshnn::serve
