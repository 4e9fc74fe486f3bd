// The LTX audio decoder's registry entry ("ltx-audio-decoder"): how AudioModel recognises an LTX
// checkpoint and runs the typed LtxAudioDecoder (typed_model.h) behind AudioModel's calls.
#include <filesystem>

#include "meshnn/audio_model.h"
#include "models/bigvgan/typed_model.h"
#include "models/common/audio_config.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/typed_model.h"
#include "models/model_spec.h"

namespace meshnn::models {
namespace {

namespace fs = std::filesystem;

// Latent frames per chunk for T frames under `run` (0 = one shot): run.chunk_frames when set, else
// mesh "auto" chunks above the memory bound. Chunks run on one device.
int64_t ltx_chunk_frames(int64_t T, const RunOptions& run) {
  const int64_t chunk = run.chunk_frames >= 0 ? run.chunk_frames
                        : run.mesh == "auto"  ? LtxAudioDecoder::auto_chunk_frames(T)
                                              : 0;
  MESHNN_CHECK_AS(InvalidArgument, chunk == 0 || run.mesh == "auto" || run.mesh == "1x1",
                  "chunks of ", chunk, " latent frames need mesh 1x1 (got ", run.mesh,
                  "): chunked decode runs on one device; decode one shot to shard over the mesh");
  return chunk;
}

// What run() checks on the latent's shape alone: its layout, batch 1, the mesh or chunks.
void check_ltx_input(const Shape& input, const RunOptions& run) {
  const Shape s = ltx_latent_shape(input, "latent");
  if (ltx_chunk_frames(s[2], run) > 0) return;
  const MeshConfig mc = parse_mesh(run.mesh == "auto" ? "1x1" : run.mesh);
  if (run.mesh != "auto" || run.backend == Backend::local)
    meshnn::LtxAudioDecoder::check_mesh_fits(s[2], mc.rows * mc.cols);
}

struct LtxModel final : AudioModel::Impl {
  meshnn::LtxAudioDecoder dec;
  LtxModel(meshnn::LtxAudioDecoder d, const nlohmann::json& config) : dec(std::move(d)) {
    model = "ltx-audio-decoder";
    variant = dec.version();
    config_json = config.dump();
    parameters = dec.parameters();
    const std::vector<std::string> stages = dec.precision_stages();
    const std::vector<Precision> modes = dec.stage_precisions();
    for (size_t i = 0; i < stages.size(); ++i) precisions.emplace_back(stages[i], modes[i]);
    const bool v23 = dec.version() == "ltx-2.3";
    description = v23 ? "LTX-2.3 audio decoder (mel-VAE → BigVGAN v2 → bandwidth extension)"
                      : "LTX-2 audio decoder (mel-VAE → HiFi-GAN)";
    const int sr = dec.sample_rate();
    // A latent frame after the first adds 4 mel frames (the decode's 4T − 3): 25 per second.
    const double per_latent = static_cast<double>(dec.output_samples(2) - dec.output_samples(1));
    input = {"latent", {1, 8, -1, 16}, 2, sr / per_latent, 0};
    output = {"wave", {1, 2, -1}, 2, static_cast<double>(sr), sr};
    can_stream = true;
  }
  int64_t output_samples(int64_t frames) const override { return dec.output_samples(frames); }
  int64_t chunk_frames(int64_t frames, const RunOptions& run) const override {
    return ltx_chunk_frames(frames, run);
  }
  // latent: (B, 8, T, 16) | (8, T, 16) → (B, 2, S) stereo; chunked as chunk_frames() says.
  Tensor run(const Tensor& input_, const RunOptions& options) const override {
    Tensor latent = input_;
    if (latent.defined() && latent.rank() == 3)
      latent = latent.reshape({1, latent.dim(0), latent.dim(1), latent.dim(2)});
    meshnn::LtxAudioDecoder::check_run(latent, options);
    const int64_t chunk = ltx_chunk_frames(latent.dim(2), options);
    return chunk > 0 ? dec.decode_chunked(latent, chunk, options) : dec.decode(latent, options);
  }
  AudioStream stream(const StreamOptions& options) const override {
    return StreamingLtxDecoder(dec, options);
  }
  // "vocoder": mels (B, 2, n, 64) into the vocoder (+ bandwidth extension).
  AudioStream stage_stream(const std::string& stage, const StreamOptions& options) const override {
    MESHNN_CHECK_AS(InvalidArgument, stage == StagePrecision::kVocoder, model,
                    ": a stream enters at stage 'vocoder' only, not '", stage, "'");
    return StreamingVocoder(dec, options);
  }
};

}  // namespace

// Load order: after the diffusers-folder models (rank 10), before BigVGAN (a checkpoint with an
// LTX config in its metadata is an LTX one even when it also holds generator tensors).
ModelSpec ltx_audio_decoder_spec() {
  ModelSpec e;
  e.name = "ltx-audio-decoder";
  e.rank = 20;
  e.input = "latent";
  e.path = "an LTX checkpoint (.safetensors with `config` metadata)";
  e.refusal = [](const std::string& path, const AudioModelOptions& o) -> std::string {
    if (!fs::is_regular_file(path)) return "not a checkpoint file";
    if (!o.config_path.empty()) return "a config file was given (LTX checkpoints carry theirs)";
    const ConfigMetadata m = config_metadata(path);
    if (!m.problem.empty()) return m.problem;
    if (m.config.is_null()) return "no 'config' entry in its safetensors metadata";
    if (!is_ltx_audio_config(m.config))
      return "its config metadata has no LTX audio sections (audio_vae, vocoder)";
    return "";
  };
  e.load = [](const std::string& path, const AudioModelOptions& o) {
    meshnn::LtxAudioDecoder dec = meshnn::LtxAudioDecoder::load(path, o.precision, o.allow_unused);
    return std::make_shared<const LtxModel>(std::move(dec), config_metadata(path).config);
  };
  // LTX-2.3 at the real architecture (LtxAudioDecoder::random_ltx23).
  e.random = [](uint64_t seed, const AudioModelOptions& o) {
    return std::make_shared<const LtxModel>(
        meshnn::LtxAudioDecoder::random_ltx23(seed, o.precision), ltx23_reference_config());
  };
  // What random() builds takes (LtxModel's input for LTX-2.3: 48 kHz, 1920 samples per latent
  // frame).
  e.random_input = {"latent", {1, 8, -1, 16}, 2, 25.0, 0};
  e.check_input = check_ltx_input;
  // One file: the config is its metadata.
  e.files = [](const std::string& path, const AudioModelOptions&) {
    return std::vector<std::string>{path};
  };
  return e;
}

}  // namespace meshnn::models
