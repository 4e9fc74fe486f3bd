// The typed MiniMax-H3 audio VAE (models/minimax_h3/typed_model.h) over models/minimax_h3: the
// loaded weights shared by every call, graphs pooled per direction (one per device per call, warm
// on reuse), run by the runtime's executor with the batch items split over mesh axis 1
// (src/runtime/), the streaming decode as every model's AudioStream and the streaming encode on a
// stream engine.
#include <cmath>
#include <filesystem>
#include <random>

#include "api/audio_stream_spec.h"
#include "api/measured_cost.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/exclusive.h"
#include "meshnn/core/input_checks.h"
#include "models/bigvgan/model.h"
#include "models/minimax_h3/access.h"
#include "models/minimax_h3/model.h"
#include "models/minimax_h3/typed_model.h"
#include "runtime/executor.h"
#include "runtime/mesh_plan.h"
#include "runtime/pool.h"
#include "streaming/stream_engine.h"

namespace meshnn {

namespace h3 = models::minimax_h3;
namespace fs = std::filesystem;

// The graphs of each direction in a pool: each used by one device of one call at a time and reset
// when it comes back (no history of a call survives it); a graph keeps its plans (packed weights,
// JIT kernels) between calls, so a second call on the same mesh is warm. The layers a graph
// copies share the model's weights.
struct MiniMaxH3AudioVae::Impl {
  std::unique_ptr<const h3::Model> model;
  runtime::Pool<graph::Node> decode_graphs, encode_graphs;
  explicit Impl(std::unique_ptr<const h3::Model> m)
      : model(std::move(m)),
        decode_graphs([this] { return model->decode_stream(); }, reset_graph),
        encode_graphs([this] { return model->encode_stream(); }, reset_graph) {}
  static void reset_graph(graph::Node& g) { g.reset(); }
};

namespace {

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

}  // namespace

MiniMaxH3AudioVae::MiniMaxH3AudioVae(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

MiniMaxH3AudioVae MiniMaxH3AudioVae::load(const std::string& folder, Precision precision,
                                          Parts parts) {
  const h3::Parts p = parts == Parts::decoder   ? h3::Parts::decoder
                      : parts == Parts::encoder ? h3::Parts::encoder
                                                : h3::Parts::both;
  return MiniMaxH3AudioVae(std::make_shared<Impl>(h3::Model::load(folder, precision, p)));
}

bool MiniMaxH3AudioVae::is_folder(const std::string& path) {
  return h3::is_minimax_h3_folder(path);
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
int64_t MiniMaxH3AudioVae::min_frames_per_device(bool encode) const {
  return encode ? impl_->model->min_encode_frames_per_device()
                : impl_->model->min_decode_frames_per_device();
}

Tensor MiniMaxH3AudioVae::decode(const Tensor& latents, const RunOptions& run) const {
  const h3::Model& m = *impl_->model;
  m.check_latents(latents);
  const int64_t B = latents.dim(0);
  const runtime::MeshPlan plan =
      plan_of(run, B, latents.dim(2), m.min_decode_frames_per_device(),
              static_cast<double>(latents.dim(2)) * hop_length() / sample_rate());
  runtime::Call call;
  call.model = "MiniMax-H3 audio VAE";
  call.stage = "decode";
  Tensor y = runtime::run_on_mesh(
      plan, call, [&](int) { return impl_->decode_graphs.take(); },
      [&](graph::Node& g, const runtime::Share& s) { return m.decode(s.items(latents), g, s.ts); });
  if (run.progress) run.progress(1, 1, "decode");
  return y;
}

Tensor MiniMaxH3AudioVae::encode(const Tensor& wave, Tensor* log_std, const RunOptions& run) const {
  const h3::Model& m = *impl_->model;
  m.check_wave(wave);
  const int64_t B = wave.dim(0), C = latent_channels();
  const int64_t T = (wave.dim(2) + hop_length() - 1) / hop_length();
  const runtime::MeshPlan plan = plan_of(run, B, T, m.min_encode_frames_per_device(),
                                         static_cast<double>(wave.dim(2)) / sample_rate());
  runtime::Call call;
  call.model = "MiniMax-H3 audio VAE";
  call.stage = "encode";
  // Each device part returns [mean ; logs] along channels, (n, 2C, T).
  Tensor both = runtime::run_on_mesh(
      plan, call, [&](int) { return impl_->encode_graphs.take(); },
      [&](graph::Node& g, const runtime::Share& s) {
        const h3::Model::Posterior p = m.encode(s.items(wave), g, s.ts);
        return concat({p.mean, p.logs}, 1);
      });
  if (run.progress) run.progress(1, 1, "encode");
  if (log_std) *log_std = both.narrow(1, C, C);
  return both.narrow(1, 0, C);
}

Tensor MiniMaxH3AudioVae::denormalize(const Tensor& z) const {
  return impl_->model->denormalize(z);
}
Tensor MiniMaxH3AudioVae::normalize(const Tensor& z) const { return impl_->model->normalize(z); }

// ---- DecodeStream ---------------------------------------------------------------------------

namespace {

// The options of a stream from a call's: "auto" is one device (1x1).
StreamOptions stream_options(const RunOptions& run) {
  StreamOptions o;
  o.mesh = run.mesh == "auto" ? "1x1" : run.mesh;
  o.backend = run.backend;
  o.threads = run.threads;
  return o;
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
    return models::mel_rows(z);  // (B, C, n) → rows (B, n, C)
  };
  s.calibration = {1, api::push_frames_or(o, 8), C};
  s.lo = -2.f, s.hi = 2.f;
  s.sample_rate = m.config().sampling_rate;
  s.channels = 1;
  s.samples_per_frame = m.hop();
  return api::make_audio_stream(s, o);
}

}  // namespace

// The stream's graph holds the layers it runs (they share the model's weights), so it needs no
// handle on the model.
struct MiniMaxH3AudioVae::DecodeStream::Impl {
  AudioStream stream;
};

MiniMaxH3AudioVae::DecodeStream::DecodeStream(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
MiniMaxH3AudioVae::DecodeStream::~DecodeStream() = default;
MiniMaxH3AudioVae::DecodeStream::DecodeStream(DecodeStream&&) noexcept = default;
MiniMaxH3AudioVae::DecodeStream& MiniMaxH3AudioVae::DecodeStream::operator=(
    DecodeStream&&) noexcept = default;

Tensor MiniMaxH3AudioVae::DecodeStream::push(const Tensor& latents) {
  return impl_->stream.push(latents);
}
Tensor MiniMaxH3AudioVae::DecodeStream::flush() { return impl_->stream.flush(); }
void MiniMaxH3AudioVae::DecodeStream::reset() { impl_->stream.reset(); }
int MiniMaxH3AudioVae::DecodeStream::sample_rate() const { return impl_->stream.sample_rate(); }
int64_t MiniMaxH3AudioVae::DecodeStream::samples_per_frame() const {
  return impl_->stream.samples_per_frame();
}
int64_t MiniMaxH3AudioVae::DecodeStream::lookahead_frames() const {
  return impl_->stream.lookahead_frames();
}
double MiniMaxH3AudioVae::DecodeStream::lookahead_ms() const {
  return impl_->stream.lookahead_ms();
}
int64_t MiniMaxH3AudioVae::DecodeStream::frames_pushed() const {
  return impl_->stream.frames_pushed();
}
int64_t MiniMaxH3AudioVae::DecodeStream::samples_returned() const {
  return impl_->stream.samples_returned();
}
std::string MiniMaxH3AudioVae::DecodeStream::mesh() const { return impl_->stream.mesh(); }
bool MiniMaxH3AudioVae::DecodeStream::returns_output() const {
  return impl_->stream.returns_output();
}

MiniMaxH3AudioVae::DecodeStream MiniMaxH3AudioVae::decode_stream(const RunOptions& run) const {
  return DecodeStream(std::make_unique<DecodeStream::Impl>(
      DecodeStream::Impl{decoder_stream(*impl_->model, stream_options(run))}));
}

namespace {

// The mesh of a stream: "auto" = 1x1, or a 1xN pipeline; checked before anything is built.
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

}  // namespace

// ---- EncodeStream ---------------------------------------------------------------------------

struct MiniMaxH3AudioVae::EncodeStream::Impl {
  std::shared_ptr<const MiniMaxH3AudioVae::Impl> vae;  // keeps the weights alive
  std::unique_ptr<streaming::StreamEngine> engine;
  int64_t channels = 0, hop = 0, lookahead = 0;
  int sample_rate = 0;
  int64_t samples = 0, frames = 0, batch = 1;
  std::string mesh;
  ExclusiveUse use;

  // Graph rows (B, m, 2C) = [mean | logs] → mean (B, C, m), logs into *log_std.
  Tensor out(const Tensor& rows, Tensor* log_std) {
    const int64_t m = rows.defined() ? rows.dim(1) : 0;
    if (m == 0) {
      if (log_std) *log_std = Tensor::empty({batch, channels, 0});
      return Tensor::empty({batch, channels, 0});
    }
    frames += m;
    if (log_std) *log_std = models::mel_rows(rows.narrow(2, channels, channels).clone());
    return models::mel_rows(rows.narrow(2, 0, channels).clone());
  }
};

MiniMaxH3AudioVae::EncodeStream::EncodeStream(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
MiniMaxH3AudioVae::EncodeStream::~EncodeStream() = default;
MiniMaxH3AudioVae::EncodeStream::EncodeStream(EncodeStream&&) noexcept = default;
MiniMaxH3AudioVae::EncodeStream& MiniMaxH3AudioVae::EncodeStream::operator=(
    EncodeStream&&) noexcept = default;

Tensor MiniMaxH3AudioVae::EncodeStream::push(const Tensor& wave, Tensor* log_std) {
  Impl& s = *impl_;
  const ExclusiveUse::Claim claim(s.use, "this stream");
  MESHNN_CHECK_AS(ShapeError, wave.defined() && wave.dtype() == DType::f32,
                  "waveform: expected float32, got ",
                  wave.defined() ? dtype_name(wave.dtype()) : "no tensor");
  MESHNN_CHECK_AS(ShapeError, wave.rank() == 3 && wave.dim(0) >= 1 && wave.dim(1) == 1,
                  "waveform: expected (B, 1, n), got ", shape_str(wave.shape()));
  MESHNN_CHECK_AS(ShapeError, s.samples == 0 || wave.dim(0) == s.batch,
                  "waveform: the batch changed from ", s.batch, " to ", wave.dim(0),
                  " within a stream (flush or reset first)");
  check_finite(wave, "waveform");
  s.batch = wave.dim(0);
  s.samples += wave.dim(2);
  // (B, 1, n) and (B, n, 1) hold the same values in the same order.
  return s.out(s.engine->push(wave.clone().reshape({s.batch, wave.dim(2), 1})), log_std);
}

Tensor MiniMaxH3AudioVae::EncodeStream::flush(Tensor* log_std) {
  const ExclusiveUse::Claim claim(impl_->use, "this stream");
  Tensor y = impl_->out(impl_->engine->flush(), log_std);
  impl_->samples = impl_->frames = 0;
  return y;
}

void MiniMaxH3AudioVae::EncodeStream::reset() {
  const ExclusiveUse::Claim claim(impl_->use, "this stream");
  impl_->engine->reset();
  impl_->samples = impl_->frames = 0;
}

int MiniMaxH3AudioVae::EncodeStream::sample_rate() const { return impl_->sample_rate; }
int64_t MiniMaxH3AudioVae::EncodeStream::samples_per_frame() const { return impl_->hop; }
int64_t MiniMaxH3AudioVae::EncodeStream::lookahead_samples() const { return impl_->lookahead; }
double MiniMaxH3AudioVae::EncodeStream::lookahead_ms() const {
  return 1e3 * static_cast<double>(impl_->lookahead) / impl_->sample_rate;
}
int64_t MiniMaxH3AudioVae::EncodeStream::samples_pushed() const { return impl_->samples; }
int64_t MiniMaxH3AudioVae::EncodeStream::frames_returned() const { return impl_->frames; }
std::string MiniMaxH3AudioVae::EncodeStream::mesh() const { return impl_->mesh; }
bool MiniMaxH3AudioVae::EncodeStream::returns_output() const {
  return impl_->engine->returns_output();
}

MiniMaxH3AudioVae::EncodeStream MiniMaxH3AudioVae::encode_stream(const RunOptions& run) const {
  const h3::Model& m = *impl_->model;
  MESHNN_CHECK_AS(InvalidArgument, m.has_encoder(), "minimax_h3: the encoder was not loaded");
  const MeshConfig mc = stream_mesh(run);
  auto s = std::make_unique<EncodeStream::Impl>();
  s->vae = impl_;
  s->channels = m.config().latent_channels;
  s->hop = m.hop();
  s->sample_rate = m.config().sampling_rate;
  s->mesh = detail::concat(mc.rows, "x", mc.cols);
  graph::NodePtr g = m.encode_stream();
  s->lookahead = g->reach().right.ceil();
  // Calibrated on 8 hops of samples per push.
  s->engine = stream_engine(std::move(g), mc, 8 * s->hop);
  return EncodeStream(std::move(s));
}

// ---- the registry entry's view (models/minimax_h3/entry.cc) -----------------------------------

namespace api {

bool MiniMaxH3Access::has_encoder(const MiniMaxH3AudioVae& vae) {
  return vae.impl_->model->has_encoder();
}
bool MiniMaxH3Access::has_decoder(const MiniMaxH3AudioVae& vae) {
  return vae.impl_->model->has_decoder();
}
AudioStream MiniMaxH3Access::decoder_stream(const MiniMaxH3AudioVae& vae,
                                            const StreamOptions& options) {
  return meshnn::decoder_stream(*vae.impl_->model, options);
}

}  // namespace api

}  // namespace meshnn
