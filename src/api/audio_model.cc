// meshnn::AudioModel: the calls every model answers, over the registry of models/model_spec.h
// (no model is named here: each family's entry is in its folder, listed by models/registry.cc).
#include "meshnn/audio_model.h"

#include <filesystem>

#include "io/file_util.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/config_policy.h"
#include "models/model_spec.h"

namespace meshnn {

Tensor AudioModel::Impl::encode(const Tensor&, const RunOptions&, Tensor*) const {
  throw InvalidArgument(model + " has no encoder");
}
AudioEncodeStream AudioModel::Impl::encode_stream(const RunOptions&) const {
  throw InvalidArgument(model + " has no encoder");
}
Tensor AudioModel::Impl::normalize_latents(const Tensor&, bool) const {
  throw InvalidArgument(model + " has no latent statistics");
}
AudioStream AudioModel::Impl::stream(const StreamOptions&) const {
  throw InvalidArgument(model + " does not stream");
}
Tensor AudioModel::Impl::input_from_wave(const Tensor&) const {
  throw InvalidArgument(model + " does not compute its input from a wave");
}
int64_t AudioModel::Impl::chunk_frames(int64_t, const RunOptions& run) const {
  MESHNN_CHECK_AS(InvalidArgument, run.chunk_frames <= 0, model, " does not run in chunks (",
                  run.chunk_frames, " frames asked): it runs one shot, its mesh bounds memory");
  return 0;
}
AudioStream AudioModel::Impl::stage_stream(const std::string& stage, const StreamOptions&) const {
  throw InvalidArgument(detail::concat(model, " has no stream entering at stage '", stage, "'"));
}

AudioModel::AudioModel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

namespace {

// The registered entry called `name`, else InvalidArgument listing the registered names.
const models::ModelSpec& entry_named(const std::string& name) {
  std::string names;
  for (const models::ModelSpec& e : models::model_specs()) {
    if (e.name == name) return e;
    names += (names.empty() ? "" : ", ") + e.name;
  }
  throw InvalidArgument(
      detail::concat("no registered audio model '", name, "' (registered: ", names, ")"));
}

// The entry options.model names, else the first (in load order) that takes `path`, else
// InvalidArgument with each one's reason.
const models::ModelSpec& entry_for(const std::string& path, const AudioModelOptions& options) {
  // A FIFO or device is refused as such (no entry would recognise it, and reading one blocks).
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) io::check_regular_input(path);
  if (!options.model.empty()) return entry_named(options.model);
  std::string why;
  for (const models::ModelSpec& e : models::model_specs()) {
    const std::string refusal = e.refusal(path, options);
    if (refusal.empty()) return e;
    why += detail::concat("\n  ", e.name, ": ", refusal);
  }
  throw InvalidArgument(
      detail::concat(path, ": not a model meshnn knows (each registered model says why):", why));
}

}  // namespace

AudioModel AudioModel::load(const std::string& path, const AudioModelOptions& options) {
  MESHNN_CHECK_AS(InvalidArgument, !(options.encoder_only && options.decoder_only),
                  "encoder_only and decoder_only together leave nothing to load");
  const AllowUnknownConfig lenient(options.allow_unknown_config);  // configs are read below
  const models::ModelSpec& e = entry_for(path, options);
  MESHNN_CHECK_AS(InvalidArgument, e.has_encoder || !options.encoder_only, path, ": ", e.name,
                  " has no encoder");
  return AudioModel(e.load(path, options));
}

std::string AudioModel::identify(const std::string& path, const AudioModelOptions& options) {
  const AllowUnknownConfig lenient(options.allow_unknown_config);
  return entry_for(path, options).name;
}

std::vector<std::string> AudioModel::files(const std::string& path,
                                           const AudioModelOptions& options) {
  const models::ModelSpec& e = entry_for(path, options);
  std::vector<std::string> out = e.files ? e.files(path, options) : std::vector<std::string>{path};
  if (!options.config_path.empty()) out.push_back(options.config_path);
  return out;
}

void AudioModel::check_input(const std::string& path, const std::vector<int64_t>& input,
                             const RunOptions& run, const AudioModelOptions& options) {
  const AllowUnknownConfig lenient(options.allow_unknown_config);
  // A named model's checks need no file (a random() model has none).
  const models::ModelSpec& e = path.empty() && !options.model.empty() ? entry_named(options.model)
                                                                      : entry_for(path, options);
  if (e.check_input) e.check_input(input, run);
}

AudioModel AudioModel::random(const std::string& model, uint64_t seed,
                              const AudioModelOptions& options) {
  const models::ModelSpec& e = entry_named(model);
  MESHNN_CHECK_AS(InvalidArgument, static_cast<bool>(e.random), model,
                  " has no random weights (load a checkpoint)");
  return AudioModel(e.random(seed, options));
}

std::vector<std::string> AudioModel::registered() {
  std::vector<std::string> names;
  for (const models::ModelSpec& e : models::model_specs()) names.push_back(e.name);
  return names;
}

std::vector<AudioModelEntry> AudioModel::catalog() {
  std::vector<AudioModelEntry> out;
  for (const models::ModelSpec& e : models::model_specs())
    out.push_back(
        {e.name, e.input, e.path, e.has_encoder, static_cast<bool>(e.random), e.random_input});
  return out;
}

std::string AudioModel::model() const { return impl_->model; }
std::string AudioModel::variant() const { return impl_->variant; }
std::string AudioModel::description() const { return impl_->description; }
std::string AudioModel::config_json() const { return impl_->config_json; }
std::vector<std::pair<std::string, Precision>> AudioModel::stage_precisions() const {
  return impl_->precisions;
}
int64_t AudioModel::parameters() const {
  MESHNN_CHECK_AS(InvalidArgument, impl_->parameters >= 0, impl_->model,
                  " does not count its parameters");
  return impl_->parameters;
}
const AudioIoSpec& AudioModel::input_spec() const { return impl_->input; }
const AudioIoSpec& AudioModel::output_spec() const { return impl_->output; }
bool AudioModel::has_encoder() const { return impl_->has_encoder; }
bool AudioModel::can_stream() const { return impl_->can_stream; }
bool AudioModel::has_wave_input() const { return impl_->has_wave_input; }
Tensor AudioModel::input_from_wave(const Tensor& samples) const {
  return impl_->input_from_wave(samples);
}
int64_t AudioModel::output_samples(int64_t frames) const { return impl_->output_samples(frames); }
int64_t AudioModel::chunk_frames(int64_t frames, const RunOptions& run) const {
  return impl_->chunk_frames(frames, run);
}

Tensor AudioModel::run(const Tensor& input, const RunOptions& options) const {
  // Explicit chunks are refused here by a model that never chunks, whatever its run() reads (the
  // frame count only matters to the automatic rule, chunk_frames < 0).
  if (options.chunk_frames > 0) (void)impl_->chunk_frames(0, options);
  return impl_->run(input, options);
}
Tensor AudioModel::run_chunked(const Tensor& input, int64_t chunk_frames,
                               const RunOptions& options) const {
  MESHNN_CHECK_AS(InvalidArgument, chunk_frames >= 1, "chunk_frames must be ≥ 1, got ",
                  chunk_frames);
  RunOptions chunked = options;
  chunked.chunk_frames = chunk_frames;
  return run(input, chunked);
}
Tensor AudioModel::encode(const Tensor& wave, const RunOptions& options, Tensor* log_std) const {
  return impl_->encode(wave, options, log_std);
}
AudioEncodeStream AudioModel::encode_stream(const RunOptions& options) const {
  return impl_->encode_stream(options);
}
bool AudioModel::has_latent_statistics() const { return impl_->has_latent_statistics; }
namespace {
// A finite z in, a finite result out (|z| near 3e38 overflows the affine: NumericalError).
Tensor checked_affine(const AudioModel::Impl& impl, const Tensor& z, bool inverse) {
  check_finite(z, "latents");
  Tensor y = impl.normalize_latents(z, inverse);
  check_model_output(y, impl.model, inverse ? "denormalize_latents" : "normalize_latents");
  return y;
}
}  // namespace

Tensor AudioModel::normalize_latents(const Tensor& z) const {
  return checked_affine(*impl_, z, false);
}
Tensor AudioModel::denormalize_latents(const Tensor& z) const {
  return checked_affine(*impl_, z, true);
}
std::vector<float> AudioModel::latents_mean() const { return impl_->latents_mean; }
std::vector<float> AudioModel::latents_std() const { return impl_->latents_std; }

AudioEncodeStream::AudioEncodeStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AudioEncodeStream::~AudioEncodeStream() = default;
AudioEncodeStream::AudioEncodeStream(AudioEncodeStream&&) noexcept = default;
AudioEncodeStream& AudioEncodeStream::operator=(AudioEncodeStream&&) noexcept = default;
Tensor AudioEncodeStream::push(const Tensor& wave, Tensor* log_std) {
  return impl_->push(wave, log_std);
}
Tensor AudioEncodeStream::flush(Tensor* log_std) { return impl_->flush(log_std); }
void AudioEncodeStream::reset() { impl_->reset(); }
int AudioEncodeStream::sample_rate() const { return impl_->sample_rate(); }
int64_t AudioEncodeStream::samples_per_frame() const { return impl_->samples_per_frame(); }
std::string AudioEncodeStream::mesh() const { return impl_->mesh(); }
bool AudioEncodeStream::returns_output() const { return impl_->returns_output(); }
int64_t AudioEncodeStream::lookahead_samples() const { return impl_->lookahead_samples(); }
double AudioEncodeStream::lookahead_ms() const { return impl_->lookahead_ms(); }
AudioStream AudioModel::stream(const StreamOptions& options) const {
  return impl_->stream(options);
}
AudioStream AudioModel::stage_stream(const std::string& stage, const StreamOptions& options) const {
  return impl_->stage_stream(stage, options);
}

}  // namespace meshnn
