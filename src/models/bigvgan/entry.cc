// NVIDIA BigVGAN's registry entry ("nvidia-bigvgan"): how AudioModel recognises a BigVGAN
// checkpoint or folder, and the loaded vocoder behind AudioModel's calls: the weights loaded once,
// a runtime::Pool of runners over them, the mesh planned and checked before any work and run by
// the runtime's executor (src/runtime/), the copy-synthesis mel front end and the vocoder stream
// (api/audio_stream_spec.h).
#include <filesystem>
#include <functional>

#include "api/audio_stream_spec.h"
#include "api/measured_cost.h"
#include "io/json.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/torch_checkpoint.h"
#include "models/bigvgan/folder.h"
#include "models/bigvgan/model.h"
#include "models/model_spec.h"
#include "runtime/chunked.h"
#include "runtime/executor.h"
#include "runtime/mesh_plan.h"
#include "runtime/pool.h"

namespace meshnn::models {
namespace {

namespace fs = std::filesystem;

// The vocoder's stream: mel frames (B, num_mels, n) → (B, 1, m) samples at the sample rate.
api::StreamSpec vocoder_stream_spec(const BigVgan& m, const StreamOptions& o) {
  const int64_t M = m.config().num_mels, hop = m.config().generator.hop();
  api::StreamSpec s;
  s.graph = [&m] { return m.graph(); };
  s.batch_key = api::batch_key(&m, "bigvgan");
  s.to_rows = [M](const Tensor& mel) {
    api::check_stream_frames(mel, {-1, M, -1}, "mel frames (B, num_mels, n)");
    return mel_rows(mel);
  };
  s.calibration = {1, api::push_frames_or(o, 32), M};
  s.lo = -8.f, s.hi = 1.f;
  s.sample_rate = m.config().generator.sampling_rate;
  s.channels = 1;
  s.samples_per_frame = hop;
  return s;
}

// The loaded model is the weights, never run itself; each call runs copies of it from the pool.
struct BigVganModel final : AudioModel::Impl {
  std::unique_ptr<const BigVgan> loaded;
  mutable runtime::Pool<BigVgan> pool;

  BigVganModel(std::unique_ptr<const BigVgan> w, std::string cfg, Precision precision)
      : loaded(std::move(w)), pool([this] { return runtime::runner_of(*loaded); }) {
    const BigVganConfig& c = loaded->config();
    model = "nvidia-bigvgan";
    variant = "bigvgan";
    config_json = std::move(cfg);
    precisions.emplace_back(StagePrecision::kVocoder, precision);  // its one stage
    const int sr = c.generator.sampling_rate;
    description = "NVIDIA BigVGAN vocoder (" + std::to_string(c.num_mels) + " mel bins, " +
                  std::to_string(sr) + " Hz)";
    input = {"mel", {-1, c.num_mels, -1}, 2, static_cast<double>(sr) / c.generator.hop(), 0};
    output = {"wave", {-1, 1, -1}, 2, static_cast<double>(sr), sr};
    can_stream = true;
    has_wave_input = true;
  }
  int64_t output_samples(int64_t frames) const override {
    return frames * loaded->config().generator.hop();
  }
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
    if (chunk == 0 || !mel.defined() || mel.rank() != 3) return run_whole(mel, options);
    RunOptions window = options;
    window.progress = nullptr;
    std::function<void(int, int, const char*)> progress;
    if (options.progress)
      progress = [&](int k, int n, const char* what) { options.progress(k, n, what); };
    return runtime::run_chunked(
        runtime::ChunkChain{0, {loaded->reach()}}, mel, 2, chunk,
        [&](const Tensor& x, const runtime::ChunkStep&) { return run_whole(x, window); }, progress);
  }
  // mel: (B, num_mels, frames) f32, finite → (B, 1, frames · hop), as BigVGAN.forward: one shot
  // on the mesh.
  Tensor run_whole(const Tensor& mel, const RunOptions& options) const {
    const BigVganConfig& c = loaded->config();
    MESHNN_CHECK_AS(ShapeError, mel.defined() && mel.dtype() == DType::f32,
                    "mel: expected float32, got ",
                    mel.defined() ? dtype_name(mel.dtype()) : "no tensor");
    MESHNN_CHECK_AS(ShapeError, mel.rank() == 3 && mel.dim(1) == c.num_mels && mel.dim(2) >= 1,
                    "mel: expected (B, ", c.num_mels, ", frames), got ", shape_str(mel.shape()));
    runtime::MeshRequest r;
    r.batch = mel.dim(0);
    r.frames = mel.dim(2);
    r.min_rows = loaded->min_frames_per_device();
    r.what = "mel";
    r.kind = "bigvgan";
    r.seconds = static_cast<double>(mel.dim(2)) * c.generator.hop() / c.generator.sampling_rate;
    r.cost = api::measured_cost(r.kind, r.seconds);
    runtime::Call call;
    call.model = "BigVGAN vocoder";
    call.progress = options.progress;
    Tensor y = runtime::run_on_mesh(
        runtime::resolve_mesh(options, r), call, [&](int) { return pool.take(); },
        [&](BigVgan& m, const runtime::Share& s) {
          Tensor w = m.vocode_mel(mel, s.ts);
          s.report(1, 1, "neural vocoder");
          return w;
        });
    return api::to_planar(y);
  }
  // Copy synthesis: (S,) mono at the sample rate → the log-mel (1, num_mels, ⌊S / hop⌋) run()
  // takes, as meldataset.py.
  Tensor input_from_wave(const Tensor& samples) const override {
    // A NaN sample would give a NaN mel without a word; an absurd finite one an inf (the log of
    // an overflowed power): both refused here, naming the cause (issue 35's hostile re-run).
    check_finite(samples, "wav");
    const Tensor m = loaded->mel_of(samples);
    check_model_output(m, "BigVGAN mel front end", "the log-mel");
    return m.reshape({1, m.dim(0), m.dim(1)});
  }
  AudioStream stream(const StreamOptions& options) const override {
    return api::make_audio_stream(vocoder_stream_spec(*loaded, options), options);
  }
  // Its one stage is the whole model.
  AudioStream stage_stream(const std::string& stage, const StreamOptions& options) const override {
    MESHNN_CHECK_AS(InvalidArgument, stage == StagePrecision::kVocoder, model,
                    ": a stream enters at stage 'vocoder' only, not '", stage, "'");
    return stream(options);
  }
};

// checkpoint: NVIDIA's folder (config.json + bigvgan_generator.pt, or a converted
// bigvgan_generator.safetensors), or a weights file (safetensors, or a torch.save .pt read by the
// weights-only reader) with NVIDIA's generator names. The config: the one given, a folder's
// config.json, a file's `config` metadata, else the config.json beside the file. precision: a
// mode, or "vocoder=mode" (other stages and the LTX presets are an InvalidArgument).
std::shared_ptr<const BigVganModel> load_bigvgan(const std::string& checkpoint,
                                                 const AudioModelOptions& o) {
  const Precision precision =
      o.precision.resolve({StagePrecision::kVocoder}, "NVIDIA BigVGAN").front();
  auto [ckpt, config] = bigvgan_files(checkpoint, o.config_path);
  // One path for every weights format: safetensors and torch.save archives alike.
  const io::WeightFile file = io::read_weight_file(ckpt);
  const auto meta = file.metadata.find("config");
  // A file without `config` metadata (every .pt) takes the config.json beside it.
  if (config.empty() && meta == file.metadata.end()) {
    const fs::path beside = fs::path(ckpt).parent_path() / "config.json";
    if (fs::is_regular_file(beside)) config = beside.string();
  }
  const std::string cfg_text = !config.empty() ? io::read_config_json_file(config).dump()
                               : meta != file.metadata.end() ? meta->second
                                                             : std::string();
  return std::make_shared<const BigVganModel>(BigVgan::load(file, config, precision), cfg_text,
                                              precision);
}

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
  e.load = load_bigvgan;
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
