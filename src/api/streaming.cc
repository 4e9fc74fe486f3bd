// Streams (AudioStream of meshnn/audio_model.h): a model's stream graph (graph/graph.h, from its
// registry entry's api::StreamSpec) on an engine (one device or a pipeline), with the layout
// conversions and input checks at the API edge and the look-ahead derived from the graph.
#include <functional>
#include <random>

#include "api/audio_stream_spec.h"
#include "api/stream_group.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/exclusive.h"
#include "meshnn/core/input_checks.h"
#include "ops/permute.h"
#include "streaming/stream_engine.h"

namespace meshnn {

struct AudioStream::Impl {
  std::function<Tensor(const Tensor&)> to_rows;  // checked public frames → (B, n, …) rows
  std::unique_ptr<streaming::StreamEngine> engine;
  int sample_rate = 0;
  int64_t samples_per_frame = 0;  // output samples per pushed frame, in the long run
  int64_t lookahead = 0;          // frames
  int64_t frames = 0, samples = 0;
  int64_t batch = 1, channels = 1;  // output (B, C, m)
  std::string mesh;
  ExclusiveUse use;  // push / flush / reset: one call at a time (InUseError otherwise)

  Tensor push(const Tensor& frames_in) {
    const Tensor rows = to_rows(frames_in);
    // A stream holds one input's history per item: its batch is fixed until flush / reset.
    MESHNN_CHECK_AS(ShapeError, frames == 0 || rows.dim(0) == batch, "the batch changed from ",
                    batch, " to ", rows.dim(0), " within a stream (flush or reset first)");
    frames += rows.dim(1);
    batch = rows.dim(0);
    return out(engine->push(rows));
  }
  Tensor flush() {
    Tensor y = out(engine->flush());
    frames = samples = 0;
    return y;
  }
  void reset() {
    engine->reset();
    frames = samples = 0;
  }
  // Output rows (B, m, C) → (B, C, m); (B, C, 0) when nothing became final.
  Tensor out(const Tensor& rows) {
    if (!rows.defined() || rows.dim(1) == 0) return Tensor::empty({batch, channels, 0});
    samples += rows.dim(1);
    return api::to_planar(rows);
  }
};

namespace {

using graph::NodePtr;

// Random rows of the stream's row shape: the pipeline's cost calibration input.
Tensor calibration_rows(Shape shape, float lo, float hi) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

std::unique_ptr<AudioStream::Impl> make_stream(const api::StreamSpec& spec,
                                               const StreamOptions& o) {
  check_thread_count(o.threads, "threads per device");
  MeshConfig mc = parse_mesh(o.mesh);
  MESHNN_CHECK_AS(InvalidArgument, mc.rows == 1,
                  "a stream runs on one device (1x1) or a pipeline of 1xN devices; got mesh ",
                  o.mesh);
  mc.backend = o.backend;
  mc.threads_per_device = o.threads;
  // A pipeline cuts between the blocks of a stage: the layout that serialises them.
  NodePtr graph = mc.cols > 1 ? graph::pipeline_layout(spec.graph()) : spec.graph();
  auto impl = std::make_unique<AudioStream::Impl>();
  impl->to_rows = spec.to_rows;
  // Frames an output sample waits for beyond its own: the graph's right reach, whole frames.
  impl->lookahead = graph->reach().right.ceil();
  impl->sample_rate = spec.sample_rate;
  impl->channels = spec.channels;
  impl->samples_per_frame = spec.samples_per_frame;
  impl->mesh = o.mesh;
  if (o.group) {
    MESHNN_CHECK_AS(InvalidArgument, mc.cols == 1 && o.backend == Backend::local,
                    "a stream group runs on one device (1x1, local); got mesh ", o.mesh);
    impl->engine = o.group->impl().join(std::move(graph), spec.batch_key);
  } else if (mc.cols == 1 && o.backend == Backend::local)
    impl->engine = streaming::single_device_engine(std::move(graph), o.threads);
  else
    impl->engine = streaming::pipeline_engine(std::move(graph), mc,
                                              calibration_rows(spec.calibration, spec.lo, spec.hi));
  return impl;
}

}  // namespace

namespace api {

Tensor to_planar(const Tensor& x) {
  if (x.dim(2) == 1) return x.reshape({x.dim(0), 1, x.dim(1)});
  return ops::deinterleave(x);
}

int64_t push_frames_or(const StreamOptions& o, int64_t fallback) {
  MESHNN_CHECK_AS(InvalidArgument, o.push_frames >= 0, "push_frames must be ≥ 0, got ",
                  o.push_frames);
  return o.push_frames > 0 ? o.push_frames : fallback;
}

void check_stream_frames(const Tensor& t, const Shape& want, const char* what) {
  MESHNN_CHECK_AS(ShapeError, t.defined() && t.dtype() == DType::f32, what,
                  ": expected float32, got ", t.defined() ? dtype_name(t.dtype()) : "no tensor");
  bool ok = t.rank() == static_cast<int>(want.size());
  for (size_t i = 0; ok && i < want.size(); ++i) ok = want[i] < 0 || t.dim(i) == want[i];
  MESHNN_CHECK_AS(ShapeError, ok, what, ": expected ", shape_str(want), " (−1 = any), got ",
                  shape_str(t.shape()));
  check_finite(t, what);
}

std::string batch_key(const void* weights, const char* graph) {
  return std::string(graph) + "@" + std::to_string(reinterpret_cast<uintptr_t>(weights));
}

AudioStream make_audio_stream(const StreamSpec& spec, const StreamOptions& options) {
  // AudioStream's constructor is for its subclasses: this one adds nothing to it.
  struct Made : AudioStream {
    explicit Made(std::unique_ptr<Impl> impl) : AudioStream(std::move(impl)) {}
  };
  return Made(make_stream(spec, options));
}

}  // namespace api

// ---- AudioStream ----------------------------------------------------------------------------

AudioStream::AudioStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
AudioStream::~AudioStream() = default;
AudioStream::AudioStream(AudioStream&&) noexcept = default;
AudioStream& AudioStream::operator=(AudioStream&&) noexcept = default;

Tensor AudioStream::push(const Tensor& frames) {
  const ExclusiveUse::Claim claim(impl_->use, "this stream");
  return impl_->push(frames);
}
Tensor AudioStream::flush() {
  const ExclusiveUse::Claim claim(impl_->use, "this stream");
  return impl_->flush();
}
void AudioStream::reset() {
  const ExclusiveUse::Claim claim(impl_->use, "this stream");
  impl_->reset();
}
int AudioStream::sample_rate() const { return impl_->sample_rate; }
int64_t AudioStream::samples_per_frame() const { return impl_->samples_per_frame; }
int64_t AudioStream::lookahead_frames() const { return impl_->lookahead; }
double AudioStream::lookahead_ms() const {
  return 1e3 * static_cast<double>(impl_->lookahead * impl_->samples_per_frame) /
         impl_->sample_rate;
}
int64_t AudioStream::frames_pushed() const { return impl_->frames; }
int64_t AudioStream::samples_returned() const { return impl_->samples; }
std::string AudioStream::mesh() const { return impl_->mesh; }
bool AudioStream::returns_output() const { return impl_->engine->returns_output(); }

}  // namespace meshnn
