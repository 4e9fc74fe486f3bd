// The public MiniMax-H3 audio VAE (meshnn/audio.h) over models/minimax_h3.
#include <omp.h>

#include <mutex>

#include "api/audio_model_registry.h"
#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "models/minimax_h3/model.h"

namespace meshnn {

struct MiniMaxH3AudioVae::Impl {
  std::unique_ptr<models::minimax_h3::Model> model;
  std::mutex mu;  // the model's graphs keep per-call state: one call at a time
};

namespace {

// Runs fn with the call's OpenMP thread count (0 = the process default); one device only.
template <class Fn>
auto with_run(const RunOptions& run, Fn&& fn) {
  MESHNN_CHECK_AS(InvalidArgument, run.mesh == "auto" || run.mesh == "1x1",
                  "MiniMax-H3 audio VAE: mesh '", run.mesh,
                  "' is not supported yet (one device: auto or 1x1)");
  MESHNN_CHECK_AS(InvalidArgument, run.backend == Backend::local,
                  "MiniMax-H3 audio VAE: only the local backend is supported yet");
  MESHNN_CHECK_AS(InvalidArgument, run.threads >= 0 && run.threads <= 4096,
                  "threads must be in [0, 4096], got ", run.threads);
  const int before = omp_get_max_threads();
  if (run.threads > 0) omp_set_num_threads(run.threads);
  struct Restore {
    int n;
    ~Restore() { omp_set_num_threads(n); }
  } restore{before};
  return fn();
}

}  // namespace

MiniMaxH3AudioVae::MiniMaxH3AudioVae(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

MiniMaxH3AudioVae MiniMaxH3AudioVae::load(const std::string& folder, Precision precision,
                                          bool decoder_only) {
  auto impl = std::make_shared<Impl>();
  impl->model = models::minimax_h3::Model::load(
      folder, precision,
      decoder_only ? models::minimax_h3::Parts::decoder : models::minimax_h3::Parts::both);
  return MiniMaxH3AudioVae(std::move(impl));
}

bool MiniMaxH3AudioVae::is_folder(const std::string& path) {
  return models::minimax_h3::is_minimax_h3_folder(path);
}

int MiniMaxH3AudioVae::sample_rate() const { return impl_->model->config().sampling_rate; }
int MiniMaxH3AudioVae::hop_length() const { return impl_->model->config().hop(); }
int MiniMaxH3AudioVae::latent_channels() const { return impl_->model->config().latent_channels; }
std::vector<float> MiniMaxH3AudioVae::latents_mean() const {
  return impl_->model->config().latents_mean;
}
std::vector<float> MiniMaxH3AudioVae::latents_std() const {
  return impl_->model->config().latents_std;
}

Tensor MiniMaxH3AudioVae::decode(const Tensor& latents, const RunOptions& run) const {
  return with_run(run, [&] {
    std::lock_guard<std::mutex> lock(impl_->mu);
    Tensor y = impl_->model->decode(latents);
    if (run.progress) run.progress(1, 1, "decode");
    return y;
  });
}

Tensor MiniMaxH3AudioVae::encode(const Tensor& wave, Tensor* log_std, const RunOptions& run) const {
  return with_run(run, [&] {
    std::lock_guard<std::mutex> lock(impl_->mu);
    models::minimax_h3::Model::Posterior p = impl_->model->encode(wave);
    if (run.progress) run.progress(1, 1, "encode");
    if (log_std) *log_std = p.logs;
    return p.mean;
  });
}

Tensor MiniMaxH3AudioVae::denormalize(const Tensor& z) const {
  return impl_->model->denormalize(z);
}
Tensor MiniMaxH3AudioVae::normalize(const Tensor& z) const { return impl_->model->normalize(z); }

// ---- registry entry --------------------------------------------------------------------------

namespace api {
namespace {

struct MiniMaxH3Model final : AudioModel::Impl {
  MiniMaxH3AudioVae vae;
  explicit MiniMaxH3Model(MiniMaxH3AudioVae v) : vae(std::move(v)) {
    model = "minimax-h3-audio-vae";
    description = "MiniMax-H3 audio VAE (32 latent channels ↔ 32 kHz, stereo as two items)";
    const int sr = vae.sample_rate();
    input = {"latent",
             {-1, vae.latent_channels(), -1},
             2,
             static_cast<double>(sr) / vae.hop_length(),
             0};
    output = {"wave", {-1, 1, -1}, 2, static_cast<double>(sr), sr};
    has_encoder = true;
  }
  int64_t output_samples(int64_t frames) const override { return frames * vae.hop_length(); }
  Tensor run(const Tensor& latents, const RunOptions& options) const override {
    return vae.decode(latents, options);
  }
  Tensor encode(const Tensor& wave, const RunOptions& options) const override {
    return vae.encode(wave, nullptr, options);
  }
};

}  // namespace

AudioModelEntry minimax_h3_audio_entry() {
  AudioModelEntry e;
  e.name = "minimax-h3-audio-vae";
  e.refusal = [](const std::string& path, const AudioModelOptions&) -> std::string {
    return MiniMaxH3AudioVae::is_folder(path)
               ? ""
               : "not a folder whose config.json names AutoencoderKLMiniMaxH3Audio";
  };
  e.load = [](const std::string& path, const AudioModelOptions& o) {
    return std::make_shared<const MiniMaxH3Model>(MiniMaxH3AudioVae::load(path, o.precision));
  };
  return e;
}

}  // namespace api

}  // namespace meshnn
