// The typed LTX decoder and BigVGAN classes (models/ltx/typed_model.h, models/bigvgan/
// typed_model.h) over the internal models: weights loaded once, a runtime::Pool of runners over
// them, one runner per device thread per call, the mesh planned and checked before any work and
// run by the runtime's executor (src/runtime/).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "api/audio_impl.h"
#include "api/measured_cost.h"
#include "io/json.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/profile.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/torch_checkpoint.h"
#include "meshnn/layers/time_shard.h"
#include "models/bigvgan/folder.h"
#include "models/bigvgan/model.h"
#include "models/bigvgan/typed_model.h"
#include "models/common/audio_description.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/random.h"
#include "models/ltx/typed_model.h"
#include "models/ltx/weights.h"
#include "runtime/executor.h"
#include "runtime/mesh_plan.h"

namespace meshnn {

// ---- LtxAudioDecoder ------------------------------------------------------------------------

LtxAudioDecoder::LtxAudioDecoder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

LtxAudioDecoder LtxAudioDecoder::load(const std::string& path, const StagePrecision& precision,
                                      bool allow_unused_tensors) {
  ProfileScope prof("load.ltx_total");
  const io::SafetensorsFile file = [&] {
    ProfileScope prof_open("load.safetensors_open");
    return io::SafetensorsFile::open(path);
  }();
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

int LtxAudioDecoder::sample_rate() const { return impl_->weights().sample_rate(); }

std::string LtxAudioDecoder::version() const {
  return impl_->weights().config().version == models::LtxAudioConfig::Version::ltx23 ? "ltx-2.3"
                                                                                     : "ltx-2";
}

int64_t LtxAudioDecoder::parameters() const { return impl_->parameters; }

std::vector<std::string> LtxAudioDecoder::precision_stages() const {
  return models::LtxAudioDecoder::precision_stages(impl_->weights().config());
}

std::vector<Precision> LtxAudioDecoder::stage_precisions() const {
  return impl_->weights().stage_precisions();
}

int64_t LtxAudioDecoder::output_samples(int64_t latent_frames) const {
  return impl_->weights().output_samples(latent_frames);
}

int64_t LtxAudioDecoder::min_frames_per_device() const {
  return impl_->weights().min_frames_per_device();
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

// The latent checked, then the mesh of a decode: no weights yet, so every device a real frame
// (decode() checks the layers' halos as well). The batch stays together.
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
}  // namespace

MeshConfig LtxAudioDecoder::check_run(const Tensor& latent, const RunOptions& run) {
  return ltx_plan(latent, run).mesh;
}

Tensor LtxAudioDecoder::decode(const Tensor& latent, const RunOptions& run) const {
  const runtime::MeshPlan plan = ltx_plan(latent, run);
  impl_->weights().check_mesh_fits(latent.dim(2), plan.mesh.rows * plan.mesh.cols);
  runtime::Call call;
  call.model = "LTX audio decoder";
  call.progress = run.progress;
  Tensor y = runtime::run_on_mesh(
      plan, call, [&](int) { return impl_->pool.take(); },
      [&](models::LtxAudioDecoder& m, const runtime::Share& s) {
        return m.decode(latent, s.ts, s.report);
      });
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
  return impl_->weights().config().generator.sampling_rate;
}
int BigVganVocoder::num_mels() const { return impl_->weights().config().num_mels; }
int BigVganVocoder::hop_length() const { return impl_->weights().config().generator.hop(); }
std::string BigVganVocoder::config_json() const { return impl_->config_json; }
int64_t BigVganVocoder::min_frames_per_device() const {
  return impl_->weights().min_frames_per_device();
}
graph::Reach BigVganVocoder::reach() const { return impl_->weights().graph()->reach(); }

Tensor BigVganVocoder::vocode(const Tensor& mel, const RunOptions& run) const {
  MESHNN_CHECK_AS(ShapeError, mel.defined() && mel.dtype() == DType::f32,
                  "mel: expected float32, got ",
                  mel.defined() ? dtype_name(mel.dtype()) : "no tensor");
  MESHNN_CHECK_AS(ShapeError, mel.rank() == 3 && mel.dim(1) == num_mels() && mel.dim(2) >= 1,
                  "mel: expected (B, ", num_mels(), ", frames), got ", shape_str(mel.shape()));
  runtime::MeshRequest r;
  r.batch = mel.dim(0);
  r.frames = mel.dim(2);
  r.min_rows = min_frames_per_device();
  r.what = "mel";
  r.kind = "bigvgan";
  r.seconds = static_cast<double>(mel.dim(2)) * hop_length() / sample_rate();
  r.cost = api::measured_cost(r.kind, r.seconds);
  runtime::Call call;
  call.model = "BigVGAN vocoder";
  call.progress = run.progress;
  Tensor y = runtime::run_on_mesh(
      runtime::resolve_mesh(run, r), call, [&](int) { return impl_->pool.take(); },
      [&](models::BigVgan& m, const runtime::Share& s) {
        Tensor w = m.vocode_mel(mel, s.ts);
        s.report(1, 1, "neural vocoder");
        return w;
      });
  return api::to_planar(y);
}

Tensor BigVganVocoder::mel_spectrogram(const Tensor& wav) const {
  // A NaN sample would give a NaN mel without a word; an absurd finite one an inf (the log of
  // an overflowed power): both refused here, naming the cause (issue 35's hostile re-run).
  check_finite(wav, "wav");
  Tensor mel = impl_->weights().mel_of(wav);
  check_model_output(mel, "BigVGAN mel front end", "the log-mel");
  return mel;
}

}  // namespace meshnn
