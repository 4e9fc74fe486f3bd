// The public MiniMax-H3 audio VAE (meshnn/audio.h) over models/minimax_h3: the loaded weights
// shared by every call, graphs pooled per direction (one per device per call, warm on reuse), the
// mesh split of models/minimax_h3/mesh.h, the streaming decode as every model's AudioStream and
// the streaming encode on a stream engine.
#include <cmath>
#include <filesystem>
#include <mutex>
#include <random>

#include "api/audio_stream_spec.h"
#include "api/scale_rule.h"
#include "meshnn/audio.h"
#include "meshnn/core/error.h"
#include "meshnn/core/exclusive.h"
#include "meshnn/core/input_checks.h"
#include "models/bigvgan/model.h"
#include "models/minimax_h3/access.h"
#include "models/minimax_h3/mesh.h"
#include "models/minimax_h3/model.h"
#include "streaming/stream_engine.h"

namespace meshnn {

namespace h3 = models::minimax_h3;
namespace fs = std::filesystem;

namespace {

// Graphs over the model's weights, each used by one device of one call at a time. A graph keeps
// its plans (packed weights, JIT kernels) between calls, so a second call on the same mesh is
// warm. Graphs are made under the lock: the layers they copy are shared, not duplicated.
class GraphPool {
 public:
  explicit GraphPool(std::function<graph::NodePtr()> make) : make_(std::move(make)) {}
  class Lease {
   public:
    Lease(GraphPool* pool, graph::NodePtr g) : pool_(pool), g_(std::move(g)) {}
    Lease(Lease&&) noexcept = default;
    ~Lease() {
      if (!g_) return;
      g_->reset();  // no history of this call survives it
      std::lock_guard<std::mutex> lock(pool_->mu_);
      pool_->idle_.push_back(std::move(g_));
    }
    graph::Node& operator*() { return *g_; }

   private:
    GraphPool* pool_;
    graph::NodePtr g_;
  };
  Lease take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.empty()) return Lease(this, make_());
    graph::NodePtr g = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(g));
  }

 private:
  std::function<graph::NodePtr()> make_;
  std::mutex mu_;
  std::vector<graph::NodePtr> idle_;
};

}  // namespace

struct MiniMaxH3AudioVae::Impl {
  std::unique_ptr<const h3::Model> model;
  GraphPool decode_graphs, encode_graphs;
  explicit Impl(std::unique_ptr<const h3::Model> m)
      : model(std::move(m)),
        decode_graphs([this] { return model->decode_stream(); }),
        encode_graphs([this] { return model->encode_stream(); }) {}
};

namespace {

// The mesh of a call over `batch` items of `frames` latent frames, checked before any work.
// "auto": one device on the local backend; on the mpi backend the scale-out rule
// (api/scale_rule.h) for `seconds` of audio: items first, then time, else replicas.
MeshConfig resolve_mesh(const RunOptions& run, int64_t batch, int64_t frames, int64_t min_frames,
                        double seconds, h3::MeshSplit* split) {
  check_thread_count(run.threads, "threads per device");
  MeshConfig mc;
  if (run.mesh == "auto") {
    if (run.backend == Backend::mpi) mc = api::auto_mpi_mesh("minimax-h3", seconds, batch);
  } else {
    mc = parse_mesh(run.mesh);
  }
  mc.backend = run.backend;
  mc.threads_per_device = run.threads;
  *split = h3::split_mesh(mc.rows, mc.cols, batch);
  check_time_split(frames, split->time_parts, min_frames, "latent sequence");
  return mc;
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
  h3::MeshSplit split;
  const MeshConfig mc =
      resolve_mesh(run, B, latents.dim(2), m.min_decode_frames_per_device(),
                   static_cast<double>(latents.dim(2)) * hop_length() / sample_rate(), &split);
  Tensor y = h3::run_split(mc, split, B, [&](int64_t first, int64_t n, const TimeShard& ts) {
    auto g = impl_->decode_graphs.take();
    return m.decode(n == B ? latents : latents.narrow(0, first, n), *g, ts);
  });
  check_model_output(y, "MiniMax-H3 audio VAE", "decode");
  if (run.progress) run.progress(1, 1, "decode");
  return y;
}

Tensor MiniMaxH3AudioVae::encode(const Tensor& wave, Tensor* log_std, const RunOptions& run) const {
  const h3::Model& m = *impl_->model;
  m.check_wave(wave);
  const int64_t B = wave.dim(0), C = latent_channels();
  const int64_t T = (wave.dim(2) + hop_length() - 1) / hop_length();
  h3::MeshSplit split;
  const MeshConfig mc = resolve_mesh(run, B, T, m.min_encode_frames_per_device(),
                                     static_cast<double>(wave.dim(2)) / sample_rate(), &split);
  // Each device part returns [mean ; logs] along channels, (n, 2C, T).
  Tensor both = h3::run_split(mc, split, B, [&](int64_t first, int64_t n, const TimeShard& ts) {
    auto g = impl_->encode_graphs.take();
    const h3::Model::Posterior p = m.encode(n == B ? wave : wave.narrow(0, first, n), *g, ts);
    return concat({p.mean, p.logs}, 1);
  });
  check_model_output(both, "MiniMax-H3 audio VAE", "encode");
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
