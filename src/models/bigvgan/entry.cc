// NVIDIA BigVGAN's registry entry ("nvidia-bigvgan"): how AudioModel recognises a BigVGAN
// checkpoint or folder and runs the typed BigVganVocoder (typed_model.h) behind AudioModel's
// calls.
#include <filesystem>
#include <functional>

#include "meshnn/audio_model.h"
#include "meshnn/io/torch_checkpoint.h"
#include "models/bigvgan/folder.h"
#include "models/bigvgan/typed_model.h"
#include "models/model_spec.h"
#include "runtime/chunked.h"

namespace meshnn::models {
namespace {

namespace fs = std::filesystem;

struct BigVganModel final : AudioModel::Impl {
  BigVganVocoder voc;
  BigVganModel(BigVganVocoder v, const StagePrecision& precision) : voc(std::move(v)) {
    model = "nvidia-bigvgan";
    variant = "bigvgan";
    config_json = voc.config_json();
    // Its one stage, resolved as BigVganVocoder::load resolved it.
    const std::vector<std::string> stages = {StagePrecision::kVocoder};
    precisions.emplace_back(stages[0], precision.resolve(stages, "NVIDIA BigVGAN")[0]);
    description = "NVIDIA BigVGAN vocoder (" + std::to_string(voc.num_mels()) + " mel bins, " +
                  std::to_string(voc.sample_rate()) + " Hz)";
    const int sr = voc.sample_rate();
    input = {"mel", {-1, voc.num_mels(), -1}, 2, static_cast<double>(sr) / voc.hop_length(), 0};
    output = {"wave", {-1, 1, -1}, 2, static_cast<double>(sr), sr};
    can_stream = true;
    has_wave_input = true;
  }
  int64_t output_samples(int64_t frames) const override { return frames * voc.hop_length(); }
  // Chunks of N mel frames (RunOptions::chunk_frames > 0) on one device; the automatic rule (−1)
  // runs one shot (a mesh bounds its memory).
  int64_t chunk_frames(int64_t, const RunOptions& run) const override {
    MESHNN_CHECK_AS(
        InvalidArgument, run.chunk_frames <= 0 || run.mesh == "auto" || run.mesh == "1x1",
        "chunks of ", run.chunk_frames, " mel frames need mesh 1x1 (got ", run.mesh,
        "): a chunked vocode runs on one device; vocode one shot to shard over the mesh");
    return run.chunk_frames > 0 ? run.chunk_frames : 0;
  }
  // mel (B, num_mels, T) → (B, 1, T·hop); in chunks as chunk_frames() says, each window's output
  // from the generator graph's reach (runtime::run_chunked).
  Tensor run(const Tensor& mel, const RunOptions& options) const override {
    const int64_t chunk = chunk_frames(0, options);
    if (chunk == 0 || !mel.defined() || mel.rank() != 3) return voc.vocode(mel, options);
    RunOptions window = options;
    window.progress = nullptr;
    std::function<void(int, int, const char*)> progress;
    if (options.progress)
      progress = [&](int k, int n, const char* what) { options.progress(k, n, what); };
    return runtime::run_chunked(
        runtime::ChunkChain{0, {voc.reach()}}, mel, 2, chunk,
        [&](const Tensor& x, const runtime::ChunkStep&) { return voc.vocode(x, window); },
        progress);
  }
  // Copy synthesis: (S,) → the log-mel (1, num_mels, ⌊S / hop⌋) vocode takes.
  Tensor input_from_wave(const Tensor& samples) const override {
    const Tensor m = voc.mel_spectrogram(samples);
    return m.reshape({1, m.dim(0), m.dim(1)});
  }
  AudioStream stream(const StreamOptions& options) const override {
    return StreamingVocoder(voc, options);
  }
  // Its one stage is the whole model.
  AudioStream stage_stream(const std::string& stage, const StreamOptions& options) const override {
    MESHNN_CHECK_AS(InvalidArgument, stage == StagePrecision::kVocoder, model,
                    ": a stream enters at stage 'vocoder' only, not '", stage, "'");
    return StreamingVocoder(voc, options);
  }
};

}  // namespace

// Last: it takes any checkpoint with a config.json beside it or config metadata.
ModelSpec nvidia_bigvgan_spec() {
  ModelSpec e;
  e.name = "nvidia-bigvgan";
  e.rank = 30;
  e.input = "mel";
  e.path =
      "NVIDIA's model folder (config.json + bigvgan_generator.pt), or generator weights "
      "(.safetensors or torch.save .pt, NVIDIA key names)";
  e.refusal = [](const std::string& path, const AudioModelOptions& o) -> std::string {
    if (fs::is_directory(path)) return bigvgan_folder_refusal(path);
    if (!fs::is_regular_file(path)) return "no such file or folder";
    if (!o.config_path.empty() || fs::is_regular_file(fs::path(path).parent_path() / "config.json"))
      return "";
    if (io::is_zip_file(path))
      return "a torch.save checkpoint without a config.json beside it (give the config)";
    const ConfigMetadata m = config_metadata(path);
    if (!m.problem.empty()) return m.problem;
    if (m.config.is_null()) return "no config.json beside it and no 'config' metadata";
    return "";
  };
  e.load = [](const std::string& path, const AudioModelOptions& o) {
    // BigVganVocoder::load finds the config as `vocode` does: the one given, a folder's
    // config.json, a file's `config` metadata, else the config.json beside the file.
    return std::make_shared<const BigVganModel>(
        BigVganVocoder::load(path, o.config_path, o.precision), o.precision);
  };
  // The generator weights (a folder's .safetensors or .pt, as load() picks) and the config it
  // reads: the one given, else the config.json beside the weights (listed even where the
  // weights' metadata is read instead: an output over it is refused all the same).
  e.files = [](const std::string& path, const AudioModelOptions& o) {
    const auto [weights, config] = bigvgan_files(path, o.config_path);
    return std::vector<std::string>{
        weights,
        config.empty() ? (fs::path(weights).parent_path() / "config.json").string() : config};
  };
  return e;
}

}  // namespace meshnn::models
