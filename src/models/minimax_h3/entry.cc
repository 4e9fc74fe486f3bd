// The MiniMax-H3 audio VAE's registry entry ("minimax-h3-audio-vae"): how AudioModel recognises a
// diffusers folder of it and runs the typed MiniMaxH3AudioVae (typed_model.h) behind AudioModel's
// calls, the encoder and the latent statistics included.
#include <filesystem>

#include "io/file_util.h"
#include "meshnn/audio_model.h"
#include "models/minimax_h3/access.h"
#include "models/minimax_h3/model.h"
#include "models/minimax_h3/typed_model.h"
#include "models/model_spec.h"

namespace meshnn::models {
namespace {

namespace fs = std::filesystem;
using api::MiniMaxH3Access;

struct MiniMaxH3Model final : AudioModel::Impl {
  MiniMaxH3AudioVae vae;
  MiniMaxH3Model(MiniMaxH3AudioVae v, std::string config) : vae(std::move(v)) {
    model = "minimax-h3-audio-vae";
    variant = "minimax-h3";
    config_json = std::move(config);
    latents_mean = vae.latents_mean();
    latents_std = vae.latents_std();
    const int sr = vae.sample_rate();
    // From the loaded config (a reduced or retrained VAE has other widths and rates).
    description =
        detail::concat("MiniMax-H3 audio VAE (", vae.latent_channels(), " latent channels ↔ ", sr,
                       " Hz, hop ", vae.hop_length(), ", stereo as two items)");
    input = {"latent",
             {-1, vae.latent_channels(), -1},
             2,
             static_cast<double>(sr) / vae.hop_length(),
             0};
    output = {"wave", {-1, 1, -1}, 2, static_cast<double>(sr), sr};
    // What was loaded (AudioModelOptions::encoder_only / decoder_only load one half).
    has_encoder = MiniMaxH3Access::has_encoder(vae);
    can_stream = MiniMaxH3Access::has_decoder(vae);
    has_latent_statistics = true;
  }
  int64_t output_samples(int64_t frames) const override { return frames * vae.hop_length(); }
  Tensor run(const Tensor& latents, const RunOptions& options) const override {
    return vae.decode(latents, options);
  }
  Tensor encode(const Tensor& wave, const RunOptions& options, Tensor* log_std) const override {
    return vae.encode(wave, log_std, options);
  }
  AudioEncodeStream encode_stream(const RunOptions& options) const override {
    struct Stream final : AudioEncodeStream::Impl {
      MiniMaxH3AudioVae::EncodeStream st;
      explicit Stream(MiniMaxH3AudioVae::EncodeStream s) : st(std::move(s)) {}
      Tensor push(const Tensor& wave, Tensor* log_std) override { return st.push(wave, log_std); }
      Tensor flush(Tensor* log_std) override { return st.flush(log_std); }
      void reset() override { st.reset(); }
      bool returns_output() const override { return st.returns_output(); }
      int64_t lookahead_samples() const override { return st.lookahead_samples(); }
      double lookahead_ms() const override { return st.lookahead_ms(); }
      int sample_rate() const override { return st.sample_rate(); }
      int64_t samples_per_frame() const override { return st.samples_per_frame(); }
      std::string mesh() const override { return st.mesh(); }
    };
    return AudioEncodeStream(std::make_unique<Stream>(vae.encode_stream(options)));
  }
  Tensor normalize_latents(const Tensor& z, bool inverse) const override {
    return inverse ? vae.denormalize(z) : vae.normalize(z);
  }
  // The decoder's stream: latents (B, C, n) → (B, 1, m), as decode_stream().
  AudioStream stream(const StreamOptions& options) const override {
    return MiniMaxH3Access::decoder_stream(vae, options);
  }
};

}  // namespace

// First in load order: a diffusers folder says what it is (its config.json names the class).
ModelSpec minimax_h3_audio_vae_spec() {
  ModelSpec e;
  e.name = "minimax-h3-audio-vae";
  e.rank = 10;
  e.has_encoder = true;
  e.input = "latent";
  e.path = "a MiniMax-H3 audio VAE folder (config.json + diffusion_pytorch_model.safetensors)";
  e.refusal = [](const std::string& path, const AudioModelOptions&) -> std::string {
    return MiniMaxH3AudioVae::is_folder(path)
               ? ""
               : "not a folder whose config.json names AutoencoderKLMiniMaxH3Audio";
  };
  e.load = [](const std::string& path, const AudioModelOptions& o) {
    MiniMaxH3AudioVae vae =
        MiniMaxH3AudioVae::load(path, o.precision.uniform("the MiniMax-H3 audio VAE"),
                                o.encoder_only   ? MiniMaxH3AudioVae::Parts::encoder
                                : o.decoder_only ? MiniMaxH3AudioVae::Parts::decoder
                                                 : MiniMaxH3AudioVae::Parts::both);
    // The config.json load() has read and checked, as text (AudioModel::config_json).
    const std::vector<uint8_t> config =
        io::read_file_bytes((fs::path(path) / minimax_h3::kConfigFile).string());
    return std::make_shared<const MiniMaxH3Model>(std::move(vae),
                                                  std::string(config.begin(), config.end()));
  };
  e.files = [](const std::string& path, const AudioModelOptions&) {
    return std::vector<std::string>{(fs::path(path) / minimax_h3::kConfigFile).string(),
                                    (fs::path(path) / minimax_h3::kWeightsFile).string()};
  };
  return e;
}

}  // namespace meshnn::models
