// The LTX-2 / LTX-2.3 audio decoder: the chain of its stages (mel-VAE, vocoder, BWE; Stages A and
// C in audio_stages.cc), one-shot and chunked decode.
#include "models/ltx/audio_decoder.h"

#include <algorithm>
#include <cstring>

#include "graph/graph.h"
#include "io/json.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/profile.h"
#include "models/common/audio_description.h"
#include "models/ltx/audio_stages.h"
#include "models/ltx/weights.h"
#include "ops/permute.h"
#include "runtime/chunked.h"

namespace meshnn::models {
namespace {
// The name the non-finite-output errors give (the public API reports the model under it too).
constexpr const char* kModelName = "LTX audio decoder";
}  // namespace

// ---- the whole chain ---------------------------------------------------------------------------

std::unique_ptr<LtxAudioDecoder> LtxAudioDecoder::load(const io::SafetensorsFile& file,
                                                       const StagePrecision& precision,
                                                       const CheckpointCheckOptions& check) {
  ProfileScope prof("load.ltx");
  const auto& meta = file.metadata();
  auto it = meta.find("config");
  if (it == meta.end())
    throw WeightError(
        "checkpoint '" + file.path() +
        "' has no 'config' entry in its safetensors metadata (LTX checkpoints carry one)");
  const LtxAudioConfig cfg = parse_ltx_audio_config(
      io::parse_config_json(it->second, file.path() + " config"), file.path());
  precision.resolve(precision_stages(cfg), model_name(cfg));  // refuse a bad stage before the keys
  // Check every key up front so that a broken checkpoint is reported in full, not key by key.
  std::map<std::string, Tensor> state;
  {
    ProfileScope prof_c("load.ltx_check");
    std::map<std::string, Shape> shapes;
    for (const std::string& k : file.keys()) shapes.emplace(k, file.shape(k));
    require_ltx_checkpoint(cfg, shapes, check, file.path());
    for (const std::string& k : file.keys())
      if (is_ltx_audio_key(k)) state.emplace(k, file.get(k));
  }
  return std::make_unique<LtxAudioDecoder>(cfg, state, precision);
}

std::vector<std::string> LtxAudioDecoder::precision_stages(const LtxAudioConfig& cfg) {
  using S = StagePrecision;
  if (cfg.version == LtxAudioConfig::Version::ltx23) return {S::kVae, S::kVocoder, S::kBwe};
  return {S::kVae, S::kVocoder};
}

const char* LtxAudioDecoder::model_name(const LtxAudioConfig& cfg) {
  return cfg.version == LtxAudioConfig::Version::ltx23 ? "LTX-2.3" : "LTX-2";
}

LtxAudioDecoder::LtxAudioDecoder(const LtxAudioConfig& cfg,
                                 const std::map<std::string, Tensor>& state,
                                 const StagePrecision& precision)
    : cfg_(cfg), stage_precisions_(precision.resolve(precision_stages(cfg), model_name(cfg))) {
  // Each stage's layers are built at its own mode; nothing crosses a stage boundary but f32
  // activations, so a stage's numerics do not depend on its neighbours' modes.
  {
    ProfileScope prof("load.ltx_vae");
    vae_ = std::make_unique<MelVae>(cfg_.vae, state, stage_precisions_[0]);
  }
  const bool v23 = cfg_.version == LtxAudioConfig::Version::ltx23;
  {
    ProfileScope prof("load.ltx_vocoder");
    vocoder_ = std::make_unique<Generator>(cfg_.vocoder, state, ltx_vocoder_prefix(cfg_),
                                           stage_precisions_[1]);
  }
  ProfileScope prof("load.ltx_bwe");
  if (v23) bwe_ = std::make_unique<Bwe>(cfg_.bwe, state, stage_precisions_[2]);
  min_frames_ = graph()->min_shard_rows();
}

LtxAudioDecoder::~LtxAudioDecoder() = default;

// The chain's one wiring: mel-VAE (+ mel packing) → vocoder → BWE (LTX-2.3).
std::vector<LtxAudioDecoder::Stage> LtxAudioDecoder::stages() const {
  std::vector<Stage> out;
  std::vector<graph::NodePtr> a;
  a.push_back(vae_->build_graph());
  a.push_back(graph::map_rows("pack_mel", 1, pack_mel));
  out.push_back({"mel-VAE decoder", graph::sequence(std::move(a))});
  out.push_back({"neural vocoder", vocoder_->graph()});
  if (bwe_) out.push_back({"bandwidth extension", bwe_->build_graph()});
  return out;
}

graph::NodePtr LtxAudioDecoder::vocoder_graph() const {
  std::vector<graph::NodePtr> seq;
  for (Stage& s : stages())
    if (s.name != std::string("mel-VAE decoder")) seq.push_back(std::move(s.node));
  return graph::sequence(std::move(seq));
}

graph::NodePtr LtxAudioDecoder::graph() const {
  std::vector<graph::NodePtr> seq;
  for (Stage& s : stages()) seq.push_back(std::move(s.node));
  return graph::sequence(std::move(seq));
}

LtxAudioDecoder::LtxAudioDecoder(const LtxAudioDecoder& o)
    : cfg_(o.cfg_),
      stage_precisions_(o.stage_precisions_),
      vae_(std::make_unique<MelVae>(*o.vae_)),
      vocoder_(std::make_unique<Generator>(*o.vocoder_)),
      bwe_(o.bwe_ ? std::make_unique<Bwe>(*o.bwe_) : nullptr),
      min_frames_(o.min_frames_) {}

int64_t LtxAudioDecoder::output_samples(int64_t t) const {
  const int64_t m = std::max<int64_t>(4 * t - 3, 1);
  int64_t l = m * cfg_.vocoder.hop();
  if (bwe_) l *= cfg_.bwe.output_sampling_rate / cfg_.bwe.input_sampling_rate;
  return l;
}

// latent (B, C, T, F) → (B, T, F, C)
Tensor latent_to_channels_last(const Tensor& latent) {
  latent.check_dtype(DType::f32);
  return ops::permute(latent, {0, 2, 3, 1});
}

// mel (B, S, M, C) → (B, S, C·M), channel c·M + m
Tensor LtxAudioDecoder::pack_mel(const Tensor& mel) {
  const int64_t B = mel.dim(0), S = mel.dim(1), M = mel.dim(2), C = mel.dim(3);
  return ops::permute(mel, {0, 1, 3, 2}).reshape({B, S, C * M});
}

void LtxAudioDecoder::check_mesh_fits(int64_t T, int devices) const {
  check_time_split(T, devices, min_frames_, "latent");
}

int64_t LtxAudioDecoder::auto_chunk_frames(int64_t T) {
  return T > kAutoChunkAboveFrames ? kAutoChunkFrames : 0;
}

Shape ltx_latent_shape(const Shape& shape, const std::string& name) {
  Shape s = shape;
  if (s.size() == 3) s.insert(s.begin(), 1);
  MESHNN_CHECK_AS(ShapeError, s.size() == 4, name, ": expected (1, 8, T, 16) or (8, T, 16), got ",
                  shape_str(shape));
  MESHNN_CHECK_AS(ShapeError, s[0] == 1, name, ": a batch of ", s[0],
                  " latents; decode one latent per output file (batch 1)");
  MESHNN_CHECK_AS(ShapeError, s[1] == 8 && s[3] == 16 && s[2] >= 1, name,
                  ": expected (1, 8, T, 16), got ", shape_str(s));
  return s;
}

void LtxAudioDecoder::check_latent(const Tensor& latent) const {
  MESHNN_CHECK_AS(ShapeError, latent.defined() && latent.dtype() == DType::f32,
                  "latent: expected f32");
  MESHNN_CHECK_AS(ShapeError,
                  latent.rank() == 4 && latent.dim(1) == cfg_.vae.z_channels &&
                      latent.dim(3) == cfg_.vae.latent_mel_bins && latent.dim(2) >= 1,
                  "latent: expected shape (B, ", cfg_.vae.z_channels, ", T, ",
                  cfg_.vae.latent_mel_bins, "), got ", shape_str(latent.shape()));
  {
    const float* p = latent.data<float>();
    for (int64_t i = 0; i < latent.numel(); ++i)
      if (!std::isfinite(p[i])) {
        int64_t r = i;
        const int64_t f = r % latent.dim(3);
        r /= latent.dim(3);
        const int64_t t = r % latent.dim(2);
        r /= latent.dim(2);
        throw InvalidArgument(detail::concat("latent: non-finite value ", p[i], " at index (",
                                             r / latent.dim(1), ", ", r % latent.dim(1), ", ", t,
                                             ", ", f, ")"));
      }
  }
}

Tensor LtxAudioDecoder::decode(const Tensor& latent, const TimeShard& ts,
                               const ProgressFn& progress) {
  check_latent(latent);
  const int64_t T = latent.dim(2);
  check_mesh_fits(T, ts.parts());
  if (chain_.empty()) chain_ = stages();
  const int total = static_cast<int>(chain_.size());
  Tensor x = ts.partition(latent_to_channels_last(latent));
  int64_t real = T;
  for (int i = 0; i < total; ++i) {
    x = chain_[i].node->run(x, ts, real);
    real = chain_[i].node->out_rows(real);
    // The first stage with a non-finite output is named (a NaN weight in the mel-VAE would
    // otherwise be reported by the last stage). The real rows of this device's shard only: the
    // padded tail is not part of the output. A pass over the rows is cheap next to the stage.
    check_stage_output(x, real - ts.row0(x.dim(1)), kModelName,
                       detail::concat("stage ", i + 1, "/", total, " (", chain_[i].name, ")"));
    if (progress) progress(i + 1, total, chain_[i].name);
  }
  return ts.gather(x, real);
}

// ---- chunked decode ----------------------------------------------------------------------------

// The chain as runtime::run_chunked takes it: the mel-VAE's 4T − 3 mel frames are the units (its
// first latent owns one mel frame, each later one four), then the vocoder and the BWE, each on its
// own window of whole mel frames.
runtime::ChunkChain LtxAudioDecoder::chunk_chain(const std::vector<Stage>& chain) {
  runtime::ChunkChain c;
  const graph::Reach a = chain[0].node->reach();
  c.offset = a.rate.ceil() - chain[0].node->out_rows(1);
  for (const Stage& s : chain) c.stages.push_back(s.node->reach());
  // The vocoder's window takes its wider side on both sides (a few mel frames more than its
  // reach): the windows, and so the output bits, the chunked decode has always had.
  graph::Reach& v = c.stages[1];
  v.left = v.right = std::max(v.left, v.right);
  return c;
}

Tensor LtxAudioDecoder::decode_chunked(const Tensor& latent, int64_t chunk,
                                       const ProgressFn& progress) {
  check_latent(latent);
  // A BWE window starts on a whole mel frame: its STFT frames then fall where the whole
  // sequence's do.
  if (bwe_)
    MESHNN_CHECK(cfg_.vocoder.hop() % cfg_.bwe.hop_length == 0, "decode_chunked: vocoder hop ",
                 cfg_.vocoder.hop(), " is not a multiple of the BWE STFT hop ",
                 cfg_.bwe.hop_length);
  if (chain_.empty()) chain_ = stages();
  const int total = static_cast<int>(chain_.size());
  // latent (B, C, T, F) → (B, T, F, C): small next to any stage's output.
  return runtime::run_chunked(
      chunk_chain(chain_), latent_to_channels_last(latent), 1, chunk,
      [&](const Tensor& x, const runtime::ChunkStep& step) {
        const Stage& s = chain_[static_cast<size_t>(step.stage)];
        Tensor y = s.node->run(x);
        // Each stage's output checked finite, naming the chunk and the first stage at fault.
        check_stage_output(y, y.dim(1), kModelName,
                           detail::concat("chunk ", step.chunk + 1, "/", step.chunks, ", stage ",
                                          step.stage + 1, "/", total, " (", s.name, ")"));
        return y;
      },
      progress);
}

}  // namespace meshnn::models
