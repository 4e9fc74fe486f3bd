// The LTX audio decoder's registry entry ("ltx-audio-decoder"): how AudioModel recognises an LTX
// checkpoint, and the loaded decoder behind AudioModel's calls: the weights loaded once, a
// runtime::Pool of runners over them (one per device thread per call), the mesh planned and
// checked before any work and run by the runtime's executor (src/runtime/), chunked decode for
// long latents and the decoder's and vocoder's streams (api/audio_stream_spec.h).
#include <filesystem>

#include "api/audio_stream_spec.h"
#include "api/measured_cost.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/profile.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/time_shard.h"
#include "models/common/audio_config.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/random.h"
#include "models/ltx/weights.h"
#include "models/model_spec.h"
#include "runtime/executor.h"
#include "runtime/mesh_plan.h"
#include "runtime/pool.h"

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

// Shape, dtype and finiteness of a latent (B, 8, T, 16) before any work (the model checks again).
void check_latent_input(const Tensor& latent) {
  MESHNN_CHECK_AS(ShapeError, latent.defined() && latent.dtype() == DType::f32,
                  "latent: expected float32, got ",
                  latent.defined() ? dtype_name(latent.dtype()) : "no tensor");
  MESHNN_CHECK_AS(ShapeError, latent.rank() == 4, "latent: expected (B, 8, T, 16), got ",
                  shape_str(latent.shape()));
  check_finite(latent, "latent");
}

// The latent checked, then the mesh of a one-shot decode: no weights yet, so every device a real
// frame (run() checks the layers' halos as well). The batch stays together.
runtime::MeshPlan ltx_plan(const Tensor& latent, const RunOptions& run) {
  check_latent_input(latent);
  runtime::MeshRequest r;
  r.batch = latent.dim(0);
  r.frames = latent.dim(2);
  r.what = "latent";
  r.kind = "ltx-2.3";
  r.seconds = static_cast<double>(latent.dim(2)) / 25;
  r.cost = api::measured_cost(r.kind, r.seconds);
  return runtime::resolve_mesh(run, r);
}

// What run() checks on the latent's shape alone: its layout, batch 1, the mesh or chunks.
void check_ltx_input(const Shape& input, const RunOptions& run) {
  const Shape s = ltx_latent_shape(input, "latent");
  if (ltx_chunk_frames(s[2], run) > 0) return;
  const MeshConfig mc = parse_mesh(run.mesh == "auto" ? "1x1" : run.mesh);
  if (run.mesh != "auto" || run.backend == Backend::local)
    check_time_split(s[2], mc.rows * mc.cols, 1, "latent");  // no weights: a real frame each
}

// The decoder's stream: latent frames (B, 8, n, 16) → (B, 2, m).
api::StreamSpec decoder_stream_spec(const LtxAudioDecoder& m, const StreamOptions& o) {
  const int64_t Z = m.config().vae.z_channels, F = m.config().vae.latent_mel_bins;
  api::StreamSpec s;
  s.graph = [&m] { return m.graph(); };
  s.batch_key = api::batch_key(&m, "ltx_decoder");
  s.to_rows = [Z, F](const Tensor& latent) {
    api::check_stream_frames(latent, {-1, Z, -1, F}, "latent frames (B, 8, n, 16)");
    return latent_to_channels_last(latent);
  };
  s.calibration = {1, api::push_frames_or(o, 8), F, Z};
  s.lo = -2.f, s.hi = 2.f;
  s.sample_rate = m.sample_rate();
  s.channels = 2;
  s.samples_per_frame = m.output_samples(3) - m.output_samples(2);
  return s;
}

// The vocoder's stream (BigVGAN v2 + bandwidth extension for LTX-2.3, HiFi-GAN for LTX-2): mel
// frames (B, 2, n, 64) as the mel-VAE decodes them (stereo, time, mel bin) → (B, 2, m).
api::StreamSpec vocoder_stream_spec(const LtxAudioDecoder& m, const StreamOptions& o) {
  // Output samples per mel frame (a latent frame after the first makes 4 mel frames).
  const int64_t per_frame = (m.output_samples(2) - m.output_samples(1)) / 4;
  const int64_t C = m.config().vae.out_ch, F = m.config().vae.mel_bins;
  api::StreamSpec s;
  s.graph = [&m] { return m.vocoder_graph(); };
  s.batch_key = api::batch_key(&m, "ltx_vocoder");
  s.to_rows = [C, F](const Tensor& mel) {
    api::check_stream_frames(mel, {-1, C, -1, F}, "mel frames (B, 2, n, 64)");
    // (B, C, n, F) → (B, n, F, C) → (B, n, C·F) with channel c·F + f, as the mel-VAE's output.
    return LtxAudioDecoder::pack_mel(latent_to_channels_last(mel));
  };
  s.calibration = {1, api::push_frames_or(o, 32), C * F};
  s.lo = -6.f, s.hi = 1.f;
  s.sample_rate = m.sample_rate();
  s.channels = 2;
  s.samples_per_frame = per_frame;
  return s;
}

// The loaded model is the weights, never run itself; each call runs copies of it from the pool.
struct LtxModel final : AudioModel::Impl {
  std::unique_ptr<const LtxAudioDecoder> loaded;
  mutable runtime::Pool<LtxAudioDecoder> pool;

  LtxModel(std::unique_ptr<const LtxAudioDecoder> w, int64_t params, const nlohmann::json& config)
      : loaded(std::move(w)), pool([this] { return runtime::runner_of(*loaded); }) {
    const LtxAudioDecoder& dec = *loaded;
    const bool v23 = dec.config().version == LtxAudioConfig::Version::ltx23;
    model = "ltx-audio-decoder";
    variant = v23 ? "ltx-2.3" : "ltx-2";
    config_json = config.dump();
    parameters = params;
    const std::vector<std::string> stages = LtxAudioDecoder::precision_stages(dec.config());
    const std::vector<Precision> modes = dec.stage_precisions();
    for (size_t i = 0; i < stages.size(); ++i) precisions.emplace_back(stages[i], modes[i]);
    description = v23 ? "LTX-2.3 audio decoder (mel-VAE → BigVGAN v2 → bandwidth extension)"
                      : "LTX-2 audio decoder (mel-VAE → HiFi-GAN)";
    const int sr = dec.sample_rate();
    // A latent frame after the first adds 4 mel frames (the decode's 4T − 3): 25 per second.
    const double per_latent = static_cast<double>(dec.output_samples(2) - dec.output_samples(1));
    input = {"latent", {1, 8, -1, 16}, 2, sr / per_latent, 0};
    output = {"wave", {1, 2, -1}, 2, static_cast<double>(sr), sr};
    can_stream = true;
  }
  int64_t output_samples(int64_t frames) const override { return loaded->output_samples(frames); }
  int64_t chunk_frames(int64_t frames, const RunOptions& run) const override {
    return ltx_chunk_frames(frames, run);
  }
  // latent: (B, 8, T, 16) | (8, T, 16) → (B, 2, S) stereo; chunked as chunk_frames() says.
  Tensor run(const Tensor& input_, const RunOptions& options) const override {
    Tensor latent = input_;
    if (latent.defined() && latent.rank() == 3)
      latent = latent.reshape({1, latent.dim(0), latent.dim(1), latent.dim(2)});
    const runtime::MeshPlan plan = ltx_plan(latent, options);
    const int64_t chunk = ltx_chunk_frames(latent.dim(2), options);
    return chunk > 0 ? decode_chunked(latent, chunk, options) : decode(latent, plan, options);
  }
  // One shot on the planned mesh (every layer's halo in a neighbour's shard).
  Tensor decode(const Tensor& latent, const runtime::MeshPlan& plan, const RunOptions& run) const {
    loaded->check_mesh_fits(latent.dim(2), plan.mesh.rows * plan.mesh.cols);
    runtime::Call call;
    call.model = "LTX audio decoder";
    call.progress = run.progress;
    Tensor y = runtime::run_on_mesh(
        plan, call, [&](int) { return pool.take(); },
        [&](LtxAudioDecoder& m, const runtime::Share& s) {
          return m.decode(latent, s.ts, s.report);
        });
    return api::to_planar(y);
  }
  // Bounded memory on one device: chunks of `chunk_frames` latent frames with exact context.
  Tensor decode_chunked(const Tensor& latent, int64_t chunk_frames, const RunOptions& run) const {
    check_thread_count(run.threads, "threads per device");
    MeshConfig mc;
    mc.threads_per_device = run.threads;
    auto runner = pool.take();
    Tensor y;
    std::string last_stage = "the last stage";
    const ProgressFn track = [&](int i, int n, const char* s) {
      last_stage = detail::concat("chunk ", i, "/", n, " (", s, ")");
      if (run.progress) run.progress(i, n, s);
    };
    run_spmd(mc, [&](Device&) { y = runner->decode_chunked(latent, chunk_frames, track); });
    check_model_output(y, "LTX audio decoder", last_stage);
    return api::to_planar(y);
  }
  AudioStream stream(const StreamOptions& options) const override {
    return api::make_audio_stream(decoder_stream_spec(*loaded, options), options);
  }
  // "vocoder": mels (B, 2, n, 64) into the vocoder (+ bandwidth extension).
  AudioStream stage_stream(const std::string& stage, const StreamOptions& options) const override {
    MESHNN_CHECK_AS(InvalidArgument, stage == StagePrecision::kVocoder, model,
                    ": a stream enters at stage 'vocoder' only, not '", stage, "'");
    return api::make_audio_stream(vocoder_stream_spec(*loaded, options), options);
  }
};

// path: safetensors with ltx-core's key names and the `config` metadata; tensors under the audio
// prefixes that no layer uses are an error unless allow_unused (then a warning).
std::shared_ptr<const LtxModel> load_ltx(const std::string& path, const AudioModelOptions& o) {
  ProfileScope prof("load.ltx_total");
  const io::SafetensorsFile file = [&] {
    ProfileScope prof_open("load.safetensors_open");
    return io::SafetensorsFile::open(path);
  }();
  CheckpointCheckOptions check;
  check.allow_unused_audio_tensors = o.allow_unused;
  int64_t params = 0;
  for (const std::string& k : file.keys())
    if (is_ltx_audio_key(k)) params += shape_numel(file.shape(k));
  return std::make_shared<const LtxModel>(LtxAudioDecoder::load(file, o.precision, check), params,
                                          config_metadata(path).config);
}

// LTX-2.3 at the real architecture, seeded (random_ltx_state).
std::shared_ptr<const LtxModel> random_ltx23(uint64_t seed, const AudioModelOptions& o) {
  const nlohmann::json config = ltx23_reference_config();
  const LtxAudioConfig cfg = parse_ltx_audio_config(config, "LTX-2.3 reference config");
  // A bad stage name is refused before the (large) random state is drawn.
  o.precision.resolve(LtxAudioDecoder::precision_stages(cfg), LtxAudioDecoder::model_name(cfg));
  const std::map<std::string, Tensor> state = random_ltx_state(cfg, seed);
  int64_t params = 0;
  for (const auto& [k, t] : state) params += t.numel();
  return std::make_shared<const LtxModel>(
      std::make_unique<const LtxAudioDecoder>(cfg, state, o.precision), params, config);
}

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
  e.load = load_ltx;
  e.random = random_ltx23;
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
