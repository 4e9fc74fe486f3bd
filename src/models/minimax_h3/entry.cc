// The MiniMax-H3 audio VAE's registry entry ("minimax-h3-audio-vae"): how AudioModel recognises a
// diffusers folder of it, and the loaded VAE behind AudioModel's calls: the weights shared by every
// call, graphs pooled per direction (one per device per call, warm on reuse), run by the runtime's
// executor with the batch items split over mesh axis 1 (src/runtime/), the decoder's stream as
// every model's AudioStream and the encoder's stream on a stream engine.
//
// Neither direction applies latents_mean / latents_std, as diffusers' decode / encode do not;
// normalize_latents / denormalize_latents are the pipeline's affine. Stereo is two batch items.
// Mesh "RxC": axis 1 gives each group of B / C items its own mesh column (the columns never
// communicate while they compute); axis 0 splits time inside a column (every layer's halo from the
// time neighbours; encode's causal attention gathers its whole past). When C does not divide B
// (mono on 1x2), time is split over every axis > 1. "auto" is one device.
#include <filesystem>
#include <random>

#include "api/audio_stream_spec.h"
#include "api/measured_cost.h"
#include "io/file_util.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/exclusive.h"
#include "meshnn/core/input_checks.h"
#include "models/bigvgan/model.h"
#include "models/minimax_h3/model.h"
#include "models/model_spec.h"
#include "runtime/executor.h"
#include "runtime/mesh_plan.h"
#include "runtime/pool.h"
#include "streaming/stream_engine.h"

namespace meshnn::models {
namespace {

namespace fs = std::filesystem;
namespace h3 = minimax_h3;

// The mesh of a call over `batch` items of `frames` latent frames, checked before any work: the
// items never interact, so the mesh may split them (runtime/mesh_plan.h).
runtime::MeshPlan plan_of(const RunOptions& run, int64_t batch, int64_t frames, int64_t min_frames,
                          double seconds) {
  runtime::MeshRequest r;
  r.batch = batch;
  r.split_items = true;
  r.frames = frames;
  r.min_rows = min_frames;
  r.what = "latent sequence";
  r.kind = "minimax-h3";
  r.seconds = seconds;
  r.cost = api::measured_cost(r.kind, r.seconds);
  return runtime::resolve_mesh(run, r);
}

// The decoder as every model's stream is made (api/audio_stream_spec.h): latents (B, C, n) in,
// (B, 1, m) samples out; a pipeline calibrated on pushes of 8 frames unless told otherwise.
AudioStream decoder_stream(const h3::Model& m, const StreamOptions& o) {
  MESHNN_CHECK_AS(InvalidArgument, m.has_decoder(), "minimax_h3: the decoder was not loaded");
  const int64_t C = m.config().latent_channels;
  api::StreamSpec s;
  s.graph = [&m] { return m.decode_stream(); };
  s.batch_key = api::batch_key(&m, "minimax_h3_decoder");
  s.to_rows = [C](const Tensor& z) {
    api::check_stream_frames(z, {-1, C, -1}, "latent frames (B, C, n)");
    return mel_rows(z);  // (B, C, n) → rows (B, n, C)
  };
  s.calibration = {1, api::push_frames_or(o, 8), C};
  s.lo = -2.f, s.hi = 2.f;
  s.sample_rate = m.config().sampling_rate;
  s.channels = 1;
  s.samples_per_frame = m.hop();
  return api::make_audio_stream(s, o);
}

// The mesh of an encode stream: "auto" = 1x1, or a 1xN pipeline; checked before anything is built.
MeshConfig stream_mesh(const RunOptions& run) {
  check_thread_count(run.threads, "threads per device");
  MeshConfig mc = parse_mesh(run.mesh == "auto" ? "1x1" : run.mesh);
  MESHNN_CHECK_AS(InvalidArgument, mc.rows == 1,
                  "a stream runs on one device (1x1) or a pipeline of 1xN devices; got mesh ",
                  run.mesh);
  mc.backend = run.backend;
  mc.threads_per_device = run.threads;
  return mc;
}

// One device on the calling thread, or a pipeline whose cuts are calibrated on pushes of
// `cal_rows` samples like the stream's own input (uniform in [-0.5, 0.5]).
std::unique_ptr<streaming::StreamEngine> stream_engine(graph::NodePtr g, const MeshConfig& mc,
                                                       int64_t cal_rows) {
  if (mc.cols == 1 && mc.backend == Backend::local)
    return streaming::single_device_engine(std::move(g), mc.threads_per_device);
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  Tensor cal = Tensor::empty({1, cal_rows, 1});
  for (int64_t i = 0; i < cal.numel(); ++i) cal.data<float>()[i] = u(rng);
  return streaming::pipeline_engine(std::move(g), mc, cal);
}

// The encoder's stream: samples (B, 1, n) pushed a few at a time, latent frames (B, C, m) out as
// soon as they are final (the encoder's convs look ahead lookahead_samples() past a frame's own
// hop; its causal attention keeps the past as a key/value cache); flush() zero-pads the last
// partial hop as encode() does.
struct EncodeStream final : AudioEncodeStream::Impl {
  std::shared_ptr<const AudioModel::Impl> vae;  // keeps the weights alive
  std::unique_ptr<streaming::StreamEngine> engine;
  int64_t channels = 0, hop = 0, lookahead = 0;
  int rate = 0;
  int64_t samples = 0, batch = 1;  // samples since the last flush / reset
  std::string mesh_;
  ExclusiveUse use;

  // Graph rows (B, m, 2C) = [mean | logs] → mean (B, C, m), logs into *log_std.
  Tensor out(const Tensor& rows, Tensor* log_std) const {
    const int64_t m = rows.defined() ? rows.dim(1) : 0;
    if (m == 0) {
      if (log_std) *log_std = Tensor::empty({batch, channels, 0});
      return Tensor::empty({batch, channels, 0});
    }
    if (log_std) *log_std = mel_rows(rows.narrow(2, channels, channels).clone());
    return mel_rows(rows.narrow(2, 0, channels).clone());
  }
  Tensor push(const Tensor& wave, Tensor* log_std) override {
    const ExclusiveUse::Claim claim(use, "this stream");
    MESHNN_CHECK_AS(ShapeError, wave.defined() && wave.dtype() == DType::f32,
                    "waveform: expected float32, got ",
                    wave.defined() ? dtype_name(wave.dtype()) : "no tensor");
    MESHNN_CHECK_AS(ShapeError, wave.rank() == 3 && wave.dim(0) >= 1 && wave.dim(1) == 1,
                    "waveform: expected (B, 1, n), got ", shape_str(wave.shape()));
    MESHNN_CHECK_AS(ShapeError, samples == 0 || wave.dim(0) == batch,
                    "waveform: the batch changed from ", batch, " to ", wave.dim(0),
                    " within a stream (flush or reset first)");
    check_finite(wave, "waveform");
    batch = wave.dim(0);
    samples += wave.dim(2);
    // (B, 1, n) and (B, n, 1) hold the same values in the same order.
    return out(engine->push(wave.clone().reshape({batch, wave.dim(2), 1})), log_std);
  }
  Tensor flush(Tensor* log_std) override {
    const ExclusiveUse::Claim claim(use, "this stream");
    Tensor y = out(engine->flush(), log_std);
    samples = 0;
    return y;
  }
  void reset() override {
    const ExclusiveUse::Claim claim(use, "this stream");
    engine->reset();
    samples = 0;
  }
  bool returns_output() const override { return engine->returns_output(); }
  int64_t lookahead_samples() const override { return lookahead; }
  double lookahead_ms() const override { return 1e3 * static_cast<double>(lookahead) / rate; }
  int sample_rate() const override { return rate; }
  int64_t samples_per_frame() const override { return hop; }
  std::string mesh() const override { return mesh_; }
};

// The graphs of each direction in a pool: each used by one device of one call at a time and reset
// when it comes back (no history of a call survives it); a graph keeps its plans (packed weights,
// JIT kernels) between calls, so a second call on the same mesh is warm. The layers a graph
// copies share the model's weights.
struct MiniMaxH3Model final : AudioModel::Impl, std::enable_shared_from_this<MiniMaxH3Model> {
  std::unique_ptr<const h3::Model> vae;
  mutable runtime::Pool<graph::Node> decode_graphs, encode_graphs;

  MiniMaxH3Model(std::unique_ptr<const h3::Model> m, std::string config)
      : vae(std::move(m)),
        decode_graphs([this] { return vae->decode_stream(); }, reset_graph),
        encode_graphs([this] { return vae->encode_stream(); }, reset_graph) {
    const h3::Config& c = vae->config();
    model = "minimax-h3-audio-vae";
    variant = "minimax-h3";
    config_json = std::move(config);
    latents_mean = c.latents_mean;
    latents_std = c.latents_std;
    const int sr = c.sampling_rate;
    // From the loaded config (a reduced or retrained VAE has other widths and rates).
    description = detail::concat("MiniMax-H3 audio VAE (", c.latent_channels, " latent channels ↔ ",
                                 sr, " Hz, hop ", c.hop(), ", stereo as two items)");
    input = {"latent", {-1, c.latent_channels, -1}, 2, static_cast<double>(sr) / c.hop(), 0};
    output = {"wave", {-1, 1, -1}, 2, static_cast<double>(sr), sr};
    // What was loaded (AudioModelOptions::encoder_only / decoder_only load one half).
    has_encoder = vae->has_encoder();
    can_stream = vae->has_decoder();
    has_latent_statistics = true;
  }
  static void reset_graph(graph::Node& g) { g.reset(); }
  double seconds(int64_t samples) const {
    return static_cast<double>(samples) / vae->config().sampling_rate;
  }

  int64_t output_samples(int64_t frames) const override { return frames * vae->hop(); }
  // latents: (B, C, T) f32, finite, denormalised → (B, 1, hop·T) f32 in [−1, 1]; no trim.
  Tensor run(const Tensor& latents, const RunOptions& options) const override {
    const h3::Model& m = *vae;
    m.check_latents(latents);
    const runtime::MeshPlan plan =
        plan_of(options, latents.dim(0), latents.dim(2), m.min_decode_frames_per_device(),
                seconds(latents.dim(2) * m.hop()));
    runtime::Call call;
    call.model = "MiniMax-H3 audio VAE";
    call.stage = "decode";
    Tensor y = runtime::run_on_mesh(
        plan, call, [&](int) { return decode_graphs.take(); },
        [&](graph::Node& g, const runtime::Share& s) {
          return m.decode(s.items(latents), g, s.ts);
        });
    if (options.progress) options.progress(1, 1, "decode");
    return y;
  }
  // wave: (B, 1, L) f32, finite, L ≥ 1 → the posterior mode (B, C, ⌈L / hop⌉) (zero right-pad to
  // whole hops); log_std, when given, receives the log standard deviation, same shape.
  Tensor encode(const Tensor& wave, const RunOptions& options, Tensor* log_std) const override {
    const h3::Model& m = *vae;
    m.check_wave(wave);
    const int64_t C = m.config().latent_channels;
    const int64_t T = (wave.dim(2) + m.hop() - 1) / m.hop();
    const runtime::MeshPlan plan =
        plan_of(options, wave.dim(0), T, m.min_encode_frames_per_device(), seconds(wave.dim(2)));
    runtime::Call call;
    call.model = "MiniMax-H3 audio VAE";
    call.stage = "encode";
    // Each device part returns [mean ; logs] along channels, (n, 2C, T).
    Tensor both = runtime::run_on_mesh(
        plan, call, [&](int) { return encode_graphs.take(); },
        [&](graph::Node& g, const runtime::Share& s) {
          const h3::Model::Posterior p = m.encode(s.items(wave), g, s.ts);
          return concat({p.mean, p.logs}, 1);
        });
    if (options.progress) options.progress(1, 1, "encode");
    if (log_std) *log_std = both.narrow(1, C, C);
    return both.narrow(1, 0, C);
  }
  AudioEncodeStream encode_stream(const RunOptions& options) const override {
    const h3::Model& m = *vae;
    MESHNN_CHECK_AS(InvalidArgument, m.has_encoder(), "minimax_h3: the encoder was not loaded");
    const MeshConfig mc = stream_mesh(options);
    auto s = std::make_unique<EncodeStream>();
    s->vae = shared_from_this();
    s->channels = m.config().latent_channels;
    s->hop = m.hop();
    s->rate = m.config().sampling_rate;
    s->mesh_ = detail::concat(mc.rows, "x", mc.cols);
    graph::NodePtr g = m.encode_stream();
    s->lookahead = g->reach().right.ceil();
    // Calibrated on 8 hops of samples per push.
    s->engine = stream_engine(std::move(g), mc, 8 * s->hop);
    return AudioEncodeStream(std::move(s));
  }
  // Per channel c: z·std[c] + mean[c] (DiT latents → decode input) and its inverse.
  Tensor normalize_latents(const Tensor& z, bool inverse) const override {
    return inverse ? vae->denormalize(z) : vae->normalize(z);
  }
  // The decoder's stream: latents (B, C, n) → (B, 1, m).
  AudioStream stream(const StreamOptions& options) const override {
    return decoder_stream(*vae, options);
  }
};

// folder: a diffusers component folder (config.json naming AutoencoderKLMiniMaxH3Audio +
// diffusion_pytorch_model.safetensors; weight norm unfolded or folded; f32, bf16 or f16). Every
// key problem is reported at once (WeightError); encoder_only / decoder_only build one half.
std::shared_ptr<const MiniMaxH3Model> load_h3(const std::string& path, const AudioModelOptions& o) {
  std::unique_ptr<const h3::Model> m =
      h3::Model::load(path, o.precision.uniform("the MiniMax-H3 audio VAE"),
                      o.encoder_only   ? h3::Parts::encoder
                      : o.decoder_only ? h3::Parts::decoder
                                       : h3::Parts::both);
  // The config.json load() has read and checked, as text (AudioModel::config_json).
  const std::vector<uint8_t> config =
      io::read_file_bytes((fs::path(path) / h3::kConfigFile).string());
  return std::make_shared<const MiniMaxH3Model>(std::move(m),
                                                std::string(config.begin(), config.end()));
}

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
    return h3::is_minimax_h3_folder(path)
               ? ""
               : "not a folder whose config.json names AutoencoderKLMiniMaxH3Audio";
  };
  e.load = load_h3;
  e.files = [](const std::string& path, const AudioModelOptions&) {
    return std::vector<std::string>{(fs::path(path) / h3::kConfigFile).string(),
                                    (fs::path(path) / h3::kWeightsFile).string()};
  };
  return e;
}

}  // namespace meshnn::models
