// The toy audio VAE's registry entry ("toy-audio-vae"), registered from tests/support with
// register_model_spec, as any model defined outside src/models would be: AudioModel then loads a
// toy folder and runs it one shot, time-sharded on a mesh, streamed, encoded and encode-streamed,
// through the runtime's generic pieces only (graph nodes, run_spmd + TimeShard, make_audio_stream,
// the stream engines).
#include <filesystem>
#include <mutex>
#include <random>

#include "api/audio_stream_spec.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/mesh/mesh.h"
#include "models/model_spec.h"
#include "ops/permute.h"
#include "runtime/chunked.h"
#include "streaming/stream_engine.h"
#include "support/toy_model/model.h"
#include "support/toy_model/toy_model.h"
#include "support/toy_model/weights.h"

namespace meshnn::test::toy {
namespace {

namespace fs = std::filesystem;

// The whole output of `part` run on every device of the call's mesh ("auto" = one device; "RxC"
// splits time over every axis > 1), each device with its own time shard. frames: the input's
// latent frames, checked against the fewest a device may hold.
Tensor on_mesh(const RunOptions& run, int64_t frames, int64_t min_frames,
               const std::function<Tensor(const TimeShard&)>& part) {
  check_thread_count(run.threads, "threads per device");
  MeshConfig mc = parse_mesh(run.mesh == "auto" ? "1x1" : run.mesh);
  mc.backend = run.backend;
  mc.threads_per_device = run.threads;
  std::vector<int> axes;
  for (int a = 0; a < 2; ++a)
    if ((a == 0 ? mc.rows : mc.cols) > 1) axes.push_back(a);
  check_time_split(frames, mc.rows * mc.cols, min_frames, "latent sequence");
  if (axes.empty() && mc.backend == Backend::local) return part(TimeShard());
  Tensor out;
  std::mutex mu;
  run_spmd(mc, [&](Device& d) {
    const TimeShard ts = axes.empty() ? TimeShard() : TimeShard(d, axes);
    Tensor y = part(ts);  // the whole output, on every device of the line
    if (mc.backend == Backend::local && ts.index() != 0) return;
    std::lock_guard<std::mutex> lock(mu);
    out = y;
  });
  return out;
}

// The encoder on a stream engine: samples (B, 1, n) in, [mean | logs] latent rows out.
struct EncodeStream final : AudioEncodeStream::Impl {
  std::shared_ptr<const Model> model;  // keeps the weights alive
  std::unique_ptr<streaming::StreamEngine> engine;
  int64_t batch = 1, lookahead = 0;
  std::string mesh_text = "1x1";

  // Graph rows (B, m, 2C) → mean (B, C, m); logs into *log_std.
  Tensor out(const Tensor& rows, Tensor* log_std) const {
    const int64_t C = model->config().latent_channels;
    if (!rows.defined() || rows.dim(1) == 0) {
      if (log_std) *log_std = Tensor::empty({batch, C, 0});
      return Tensor::empty({batch, C, 0});
    }
    const Tensor planar = ops::permute(rows, {0, 2, 1});  // (B, 2C, m)
    if (log_std) *log_std = planar.narrow(1, C, C).clone();
    return planar.narrow(1, 0, C).clone();
  }
  Tensor push(const Tensor& wave, Tensor* log_std) override {
    api::check_stream_frames(wave, {-1, 1, -1}, "waveform (B, 1, n)");
    batch = wave.dim(0);
    return out(engine->push(wave.clone().reshape({batch, wave.dim(2), 1})), log_std);
  }
  Tensor flush(Tensor* log_std) override { return out(engine->flush(), log_std); }
  bool returns_output() const override { return engine->returns_output(); }
  int64_t lookahead_samples() const override { return lookahead; }
  double lookahead_ms() const override {
    return 1e3 * static_cast<double>(lookahead) / model->config().sampling_rate;
  }
  void reset() override { engine->reset(); }
  int sample_rate() const override { return model->config().sampling_rate; }
  int64_t samples_per_frame() const override { return model->hop(); }
  std::string mesh() const override { return mesh_text; }
};

struct ToyAudioModel final : AudioModel::Impl {
  std::shared_ptr<const Model> m;
  explicit ToyAudioModel(std::shared_ptr<const Model> loaded) : m(std::move(loaded)) {
    const Config& c = m->config();
    model = kRegistryName;
    variant = "toy";
    description = detail::concat("toy audio VAE (", c.latent_channels, " latent channels ↔ ",
                                 c.sampling_rate, " Hz, hop ", c.hop, ")");
    input = {"latent",
             {-1, c.latent_channels, -1},
             2,
             static_cast<double>(c.sampling_rate) / static_cast<double>(c.hop),
             0};
    output = {"wave", {-1, 1, -1}, 2, static_cast<double>(c.sampling_rate), c.sampling_rate};
    has_encoder = can_stream = true;
    parameters = 0;  // every tensor of the description (the filters the layer computes aside)
    for (const auto& [key, shape] : models::required_shapes(models::flatten(weights(c))))
      parameters += shape_numel(shape);
  }
  int64_t output_samples(int64_t frames) const override { return frames * m->hop(); }
  // Chunks of N latent frames (RunOptions::chunk_frames > 0) on one device, the windows from the
  // decode graph's reach (runtime::run_chunked); the automatic rule (−1) runs one shot.
  int64_t chunk_frames(int64_t, const RunOptions& run) const override {
    return run.chunk_frames > 0 ? run.chunk_frames : 0;
  }
  Tensor run(const Tensor& z, const RunOptions& options) const override {
    m->check_latents(z);
    if (options.chunk_frames > 0) {
      MESHNN_CHECK_AS(InvalidArgument, options.mesh == "auto" || options.mesh == "1x1",
                      "chunks run on one device; got mesh ", options.mesh);
      const graph::NodePtr g = m->decode_graph();
      return runtime::run_chunked(runtime::ChunkChain{0, {g->reach()}}, z, 2, options.chunk_frames,
                                  [&](const Tensor& x, const runtime::ChunkStep&) {
                                    return m->decode(x, *g, TimeShard());
                                  });
    }
    return on_mesh(options, z.dim(2), m->min_decode_frames(),
                   [&](const TimeShard& ts) { return m->decode(z, *m->decode_graph(), ts); });
  }
  Tensor encode(const Tensor& wave, const RunOptions& options, Tensor* log_std) const override {
    m->check_wave(wave);
    const int64_t T = (wave.dim(2) + m->hop() - 1) / m->hop(), C = m->config().latent_channels;
    const Tensor both = on_mesh(options, T, m->min_encode_frames(), [&](const TimeShard& ts) {
      return m->encode(wave, *m->encode_graph(), ts);
    });
    if (log_std) *log_std = both.narrow(1, C, C).clone();
    return both.narrow(1, 0, C).clone();
  }
  AudioEncodeStream encode_stream(const RunOptions& options) const override {
    check_thread_count(options.threads, "threads per device");
    MeshConfig mc = parse_mesh(options.mesh == "auto" ? "1x1" : options.mesh);
    MESHNN_CHECK_AS(InvalidArgument, mc.rows == 1, "a stream runs on 1xN devices; got mesh ",
                    options.mesh);
    mc.backend = options.backend;
    mc.threads_per_device = options.threads;
    auto s = std::make_unique<EncodeStream>();
    s->model = m;
    s->mesh_text = detail::concat(mc.rows, "x", mc.cols);
    graph::NodePtr g = m->encode_graph();
    s->lookahead = g->reach().right.ceil();
    if (mc.cols == 1 && mc.backend == Backend::local) {
      s->engine = streaming::single_device_engine(std::move(g), mc.threads_per_device);
    } else {
      std::mt19937 rng(1234);
      std::uniform_real_distribution<float> u(-0.5f, 0.5f);
      Tensor cal = Tensor::empty({1, 8 * m->hop(), 1});  // 8 frames of samples per push
      for (int64_t i = 0; i < cal.numel(); ++i) cal.data<float>()[i] = u(rng);
      s->engine = streaming::pipeline_engine(std::move(g), mc, cal);
    }
    return AudioEncodeStream(std::move(s));
  }
  AudioStream stream(const StreamOptions& options) const override {
    const int64_t C = m->config().latent_channels;
    api::StreamSpec s;
    s.graph = [model = m] { return model->decode_graph(); };
    s.batch_key = api::batch_key(m.get(), "toy stream");
    s.to_rows = [C](const Tensor& z) {
      api::check_stream_frames(z, {-1, C, -1}, "latent frames (B, C, n)");
      return ops::permute(z, {0, 2, 1});
    };
    s.calibration = {1, api::push_frames_or(options, 8), C};
    s.lo = -1.f, s.hi = 1.f;
    s.sample_rate = m->config().sampling_rate;
    s.channels = 1;
    s.samples_per_frame = m->hop();
    return api::make_audio_stream(s, options);
  }
};

models::ModelSpec toy_spec() {
  models::ModelSpec e;
  e.name = kRegistryName;
  e.rank = 50;  // after the built-in families: a toy folder is recognised by its class name alone
  e.has_encoder = true;
  e.input = "latent";
  e.path = "a toy audio VAE folder (config.json + toy_vae.safetensors)";
  e.refusal = [](const std::string& path, const AudioModelOptions&) -> std::string {
    return Model::is_folder(path) ? "" : "not a folder whose config.json names MeshnnToyAudioVae";
  };
  e.load = [](const std::string& path, const AudioModelOptions& o) {
    return std::make_shared<const ToyAudioModel>(
        Model::load(path, o.precision.uniform("the toy audio VAE")));
  };
  e.files = [](const std::string& path, const AudioModelOptions&) {
    return std::vector<std::string>{(fs::path(path) / kConfigFile).string(),
                                    (fs::path(path) / kWeightsFile).string()};
  };
  return e;
}

}  // namespace

const bool registered = models::register_model_spec(toy_spec());

std::vector<std::string> builtin_models() {
  std::vector<std::string> out;
  for (const std::string& name : AudioModel::registered())
    if (name != kRegistryName) out.push_back(name);
  return out;
}

}  // namespace meshnn::test::toy
