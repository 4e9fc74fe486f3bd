// The public audio API (meshnn/audio.h) over the internal models: weights loaded once into a
// RunnerPool, one runner per device thread per call, the mesh chosen and checked before any work.
#include "meshnn/audio.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "api/audio_impl.h"
#include "api/scale_rule.h"
#include "io/json.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/torch_checkpoint.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/streaming.h"
#include "models/bigvgan/folder.h"
#include "models/bigvgan/model.h"
#include "models/common/audio_description.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/random.h"

namespace meshnn {
namespace {

// Mesh time axes: the non-trivial axes in row-major order.
std::vector<int> time_axes(const Device& d) {
  std::vector<int> axes;
  for (int a = 0; a < 2; ++a)
    if (d.axis_size(a) > 1) axes.push_back(a);
  return axes;
}

// "auto" on the local backend: one device whose OpenMP team spans the cores (threads, or 0 = all
// of them). Measured on the 2-core AVX-512 machine (docs/benchmarks.md, "Mesh auto"): with the
// Winograd convolutions, 1x1 with 2 threads decodes 4 s of LTX-2.3 audio in 2.75 s against 2.91 s
// for 1x2 with one thread per device on a quiet machine, and 1x2 is not the fastest set-up under
// load either; one device also needs no halos and half the plans. A mesh is an explicit choice.
MeshConfig auto_mesh_for(int threads) {
  MeshConfig mc;
  mc.threads_per_device = threads;
  return mc;
}

// The mesh a call runs on, validated against the input length before any work.
// "auto" on the mpi backend: the scale-out rule (api/scale_rule.h) for `kind` and `seconds`.
MeshConfig resolve_mesh(const RunOptions& run, int64_t frames, int64_t min_rows, const char* what,
                        const char* kind, double seconds) {
  check_thread_count(run.threads, "threads per device");
  MeshConfig mc;
  if (run.mesh == "auto") {
    mc = run.backend == Backend::mpi ? api::auto_mpi_mesh(kind, seconds, 1)
                                     : auto_mesh_for(run.threads);
    mc.threads_per_device = run.threads;
  } else {
    mc = parse_mesh(run.mesh);
    mc.threads_per_device = run.threads;
  }
  mc.backend = run.backend;
  check_time_split(frames, mc.rows * mc.cols, min_rows, what);
  return mc;
}

// Runs `step(runner, shard, report)` on every device of the mesh with a runner from `pool`;
// returns device 0's result (every device returns the same gathered tensor).
// A non-finite output is reported as the model's fault, naming the last stage that ran.
template <class Model, class Step>
Tensor run_on_mesh(api::RunnerPool<Model>& pool, const MeshConfig& mc, const ProgressFn& progress,
                   const Step& step, const char* model) {
  Tensor out;
  std::mutex mu;
  run_spmd(mc, [&](Device& d) {
    auto runner = pool.take();
    const std::vector<int> axes = time_axes(d);
    const TimeShard ts = axes.empty() ? TimeShard() : TimeShard(d, axes);
    const bool reports = d.rank() == 0;
    std::string last_stage = "the last stage";
    const models::ProgressFn report = [&](int i, int n, const char* s) {
      last_stage = detail::concat("stage ", i, "/", n, " (", s, ")");
      if (reports && progress) progress(i, n, s);
    };
    Tensor y = step(*runner, ts, report);
    check_model_output(y, model, last_stage);
    if (d.rank() == 0 || mc.backend == Backend::mpi) {
      std::lock_guard<std::mutex> lock(mu);
      if (!out.defined() || d.rank() == 0) out = y;
    }
  });
  return out;
}

}  // namespace

// ---- LtxAudioDecoder ------------------------------------------------------------------------

LtxAudioDecoder::LtxAudioDecoder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

LtxAudioDecoder LtxAudioDecoder::load(const std::string& path, const StagePrecision& precision,
                                      bool allow_unused_tensors) {
  const io::SafetensorsFile file = io::SafetensorsFile::open(path);
  models::CheckpointCheckOptions check;
  check.allow_unused_audio_tensors = allow_unused_tensors;
  int64_t params = 0;
  for (const std::string& k : file.keys())
    if (models::is_ltx_audio_key(k)) params += shape_numel(file.shape(k));
  return LtxAudioDecoder(
      std::make_shared<Impl>(models::LtxAudioDecoder::load(file, precision, check), params));
}

LtxAudioDecoder LtxAudioDecoder::random_ltx23(uint64_t seed, const StagePrecision& precision) {
  const models::LtxAudioConfig cfg =
      models::parse_ltx_audio_config(models::ltx23_reference_config(), "LTX-2.3 reference config");
  // A bad stage name is refused before the (large) random state is drawn.
  precision.resolve(models::LtxAudioDecoder::precision_stages(cfg),
                    models::LtxAudioDecoder::model_name(cfg));
  const std::map<std::string, Tensor> state = models::random_ltx_state(cfg, seed);
  int64_t params = 0;
  for (const auto& [k, t] : state) params += t.numel();
  return LtxAudioDecoder(std::make_shared<Impl>(
      std::make_unique<const models::LtxAudioDecoder>(cfg, state, precision), params));
}

void LtxAudioDecoder::save_random_ltx23(const std::string& path, uint64_t seed) {
  const nlohmann::json config = models::ltx23_reference_config();
  const models::LtxAudioConfig cfg =
      models::parse_ltx_audio_config(config, "LTX-2.3 reference config");
  std::map<std::string, Tensor> bf;
  for (const auto& [k, t] : models::random_ltx_state(cfg, seed))
    bf[k] = t.to(DType::bf16);  // values are bf16-exact: lossless
  io::save_safetensors(path, bf, {{"config", config.dump()}});
}

int LtxAudioDecoder::sample_rate() const { return impl_->pool.weights().sample_rate(); }

std::string LtxAudioDecoder::version() const {
  return impl_->pool.weights().config().version == models::LtxAudioConfig::Version::ltx23
             ? "ltx-2.3"
             : "ltx-2";
}

int64_t LtxAudioDecoder::parameters() const { return impl_->parameters; }

std::vector<std::string> LtxAudioDecoder::precision_stages() const {
  return models::LtxAudioDecoder::precision_stages(impl_->pool.weights().config());
}

std::vector<Precision> LtxAudioDecoder::stage_precisions() const {
  return impl_->pool.weights().stage_precisions();
}

int64_t LtxAudioDecoder::output_samples(int64_t latent_frames) const {
  return impl_->pool.weights().output_samples(latent_frames);
}

MeshConfig LtxAudioDecoder::auto_mesh(int64_t latent_frames, int threads) {
  return auto_mesh_for(threads);
}

int64_t LtxAudioDecoder::min_frames_per_device() const {
  return impl_->pool.weights().min_frames_per_device();
}

void LtxAudioDecoder::check_mesh_fits(int64_t latent_frames, int devices) {
  check_time_split(latent_frames, devices, 1, "latent");  // no weights: a real frame each
}

int64_t LtxAudioDecoder::auto_chunk_frames(int64_t latent_frames) {
  return models::LtxAudioDecoder::auto_chunk_frames(latent_frames);
}

namespace {
// Shape, dtype and finiteness of a latent before any work (the model checks again on its own).
void check_latent_input(const Tensor& latent) {
  MESHNN_CHECK_AS(ShapeError, latent.defined() && latent.dtype() == DType::f32,
                  "latent: expected float32, got ",
                  latent.defined() ? dtype_name(latent.dtype()) : "no tensor");
  MESHNN_CHECK_AS(ShapeError, latent.rank() == 4, "latent: expected (B, 8, T, 16), got ",
                  shape_str(latent.shape()));
  check_finite(latent, "latent");
}
}  // namespace

MeshConfig LtxAudioDecoder::check_run(const Tensor& latent, const RunOptions& run) {
  check_latent_input(latent);
  // No weights yet: every device a real frame; decode() checks the layers' halos as well.
  return resolve_mesh(run, latent.dim(2), 1, "latent", "ltx-2.3",
                      static_cast<double>(latent.dim(2)) / 25);
}

Tensor LtxAudioDecoder::decode(const Tensor& latent, const RunOptions& run) const {
  const MeshConfig mc = check_run(latent, run);
  impl_->pool.weights().check_mesh_fits(latent.dim(2), mc.rows * mc.cols);
  Tensor y = run_on_mesh(
      impl_->pool, mc, run.progress,
      [&](models::LtxAudioDecoder& m, const TimeShard& ts, const models::ProgressFn& report) {
        return m.decode(latent, ts, report);
      },
      "LTX audio decoder");
  return api::to_planar(y);
}

Tensor LtxAudioDecoder::decode_chunked(const Tensor& latent, int64_t chunk_frames,
                                       const RunOptions& run) const {
  check_latent_input(latent);
  check_thread_count(run.threads, "threads per device");
  MESHNN_CHECK_AS(InvalidArgument, run.mesh == "auto" || run.mesh == "1x1",
                  "chunked decode runs on one device: use mesh 1x1 (got ", run.mesh, ")");
  MeshConfig mc;
  mc.threads_per_device = run.threads;
  auto runner = impl_->pool.take();
  const models::ProgressFn report = [&](int i, int n, const char* s) {
    if (run.progress) run.progress(i, n, s);
  };
  Tensor y;
  std::string last_stage = "the last stage";
  const models::ProgressFn track = [&](int i, int n, const char* s) {
    last_stage = detail::concat("chunk ", i, "/", n, " (", s, ")");
    report(i, n, s);
  };
  run_spmd(mc, [&](Device&) { y = runner->decode_chunked(latent, chunk_frames, track); });
  check_model_output(y, "LTX audio decoder", last_stage);
  return api::to_planar(y);
}

// ---- BigVganVocoder -------------------------------------------------------------------------

BigVganVocoder::BigVganVocoder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

BigVganVocoder BigVganVocoder::load(const std::string& checkpoint, const std::string& config_path,
                                    const StagePrecision& stage_precision) {
  const Precision precision =
      stage_precision.resolve({StagePrecision::kVocoder}, "NVIDIA BigVGAN").front();
  auto [ckpt, config] = models::bigvgan_files(checkpoint, config_path);
  // One path for every weights format: safetensors and torch.save archives alike.
  const io::WeightFile file = io::read_weight_file(ckpt);
  const auto meta = file.metadata.find("config");
  // A file without `config` metadata (every .pt) takes the config.json beside it.
  if (config.empty() && meta == file.metadata.end()) {
    const std::filesystem::path beside = std::filesystem::path(ckpt).parent_path() / "config.json";
    if (std::filesystem::is_regular_file(beside)) config = beside.string();
  }
  const std::string cfg_text = !config.empty() ? io::read_config_json_file(config).dump()
                               : meta != file.metadata.end() ? meta->second
                                                             : std::string();
  return BigVganVocoder(
      std::make_shared<Impl>(models::BigVgan::load(file, config, precision), cfg_text));
}

int BigVganVocoder::sample_rate() const {
  return impl_->pool.weights().config().generator.sampling_rate;
}
int BigVganVocoder::num_mels() const { return impl_->pool.weights().config().num_mels; }
int BigVganVocoder::hop_length() const { return impl_->pool.weights().config().generator.hop(); }
std::string BigVganVocoder::config_json() const { return impl_->config_json; }
int64_t BigVganVocoder::min_frames_per_device() const {
  return impl_->pool.weights().min_frames_per_device();
}

Tensor BigVganVocoder::vocode(const Tensor& mel, const RunOptions& run) const {
  MESHNN_CHECK_AS(ShapeError, mel.defined() && mel.dtype() == DType::f32,
                  "mel: expected float32, got ",
                  mel.defined() ? dtype_name(mel.dtype()) : "no tensor");
  MESHNN_CHECK_AS(ShapeError, mel.rank() == 3 && mel.dim(1) == num_mels() && mel.dim(2) >= 1,
                  "mel: expected (B, ", num_mels(), ", frames), got ", shape_str(mel.shape()));
  const MeshConfig mc =
      resolve_mesh(run, mel.dim(2), min_frames_per_device(), "mel", "bigvgan",
                   static_cast<double>(mel.dim(2)) * hop_length() / sample_rate());
  Tensor y = run_on_mesh(
      impl_->pool, mc, run.progress,
      [&](models::BigVgan& m, const TimeShard& ts, const models::ProgressFn& report) {
        Tensor w = m.vocode_mel(mel, ts);
        report(1, 1, "neural vocoder");
        return w;
      },
      "BigVGAN vocoder");
  return api::to_planar(y);
}

Tensor BigVganVocoder::mel_spectrogram(const Tensor& wav) const {
  // A NaN sample would give a NaN mel without a word; an absurd finite one an inf (the log of
  // an overflowed power): both refused here, naming the cause (issue 35's hostile re-run).
  check_finite(wav, "wav");
  Tensor mel = impl_->pool.weights().mel_of(wav);
  check_model_output(mel, "BigVGAN mel front end", "the log-mel");
  return mel;
}

}  // namespace meshnn
