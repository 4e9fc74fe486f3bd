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

Tensor LtxAudioDecoder::stage_a(const Tensor& latent_cl, const TimeShard& ts, int64_t real) {
  return vae_->forward(latent_cl, ts, real);
}

Tensor LtxAudioDecoder::stage_b(const Tensor& mel_packed, const TimeShard& ts, int64_t real) {
  return vocoder_->forward(mel_packed, ts, real);
}

LtxAudioDecoder::StageC LtxAudioDecoder::stage_c(const Tensor& wav16, const TimeShard& ts,
                                                 int64_t real) {
  MESHNN_CHECK(bwe_ != nullptr, "stage C: this checkpoint (LTX-2) has no bandwidth extension");
  return bwe_->forward(wav16, ts, real, true);
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

Tensor prepare_ltx_latent(const Tensor& latent, const std::string& name) {
  Tensor x = float_input(latent, name);
  x = x.reshape(ltx_latent_shape(x.shape(), name));
  check_finite(x, name);
  return x;
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

// ---- chunked decode
// ------------------------------------------------------------------------------

LtxAudioDecoder::ChunkContext LtxAudioDecoder::chunk_context() const {
  return chunk_context_of(stages());
}

LtxAudioDecoder::ChunkContext LtxAudioDecoder::chunk_context_of(
    const std::vector<Stage>& chain) const {
  // From the graphs' reaches, in each stage's input rows: latents, mel frames, and the BWE's
  // 16 kHz samples converted to whole mel frames of the vocoder hop.
  ChunkContext c;
  const graph::Reach a = chain[0].node->reach(), b = chain[1].node->reach();
  // The windows below give Stage A left context only: the mel-VAE is causal in latents.
  MESHNN_CHECK(a.right == graph::Rows(0), "chunk_context: the mel-VAE graph reads ahead");
  c.stage_a_latents = a.left.ceil();
  c.stage_b_mels = std::max(b.left.ceil(), b.right.ceil());
  if (bwe_) {
    const graph::Reach r = chain[2].node->reach();
    const graph::Rows per_mel(1, cfg_.vocoder.hop());
    c.stage_c_left = (r.left * per_mel).ceil();
    c.stage_c_right = (r.right * per_mel).ceil();
  }
  return c;
}

namespace {

// dst (B, L, C) rows [row, row + n) ← src (B, n, C).
void put_rows(Tensor& dst, const Tensor& src, int64_t row) {
  const int64_t B = dst.dim(0), L = dst.dim(1), C = dst.dim(2), n = src.dim(1);
  MESHNN_CHECK_AS(ShapeError, src.dim(0) == B && src.dim(2) == C && row + n <= L,
                  "put_rows: ", shape_str(src.shape()), " at row ", row, " into ",
                  shape_str(dst.shape()));
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(dst.data<float>() + (b * L + row) * C, src.data<float>() + b * n * C,
                static_cast<size_t>(n * C) * sizeof(float));
}

}  // namespace

Tensor LtxAudioDecoder::decode_chunked(const Tensor& latent, int64_t chunk,
                                       const ProgressFn& progress) {
  check_latent(latent);
  MESHNN_CHECK_AS(InvalidArgument, chunk >= 1, "decode_chunked: chunk of ", chunk,
                  " latent frames; need at least 1");
  const int64_t B = latent.dim(0), T = latent.dim(2), M = 4 * T - 3;
  const int64_t hop = cfg_.vocoder.hop();
  const int64_t per_mel = output_samples(T) / M;  // output samples per mel frame
  if (bwe_)
    MESHNN_CHECK(hop % cfg_.bwe.hop_length == 0, "decode_chunked: vocoder hop ", hop,
                 " is not a multiple of the BWE STFT hop ", cfg_.bwe.hop_length);
  if (chain_.empty()) chain_ = stages();
  const ChunkContext ctx = chunk_context_of(chain_);   // the reaches of the graphs that will run
  const Tensor lat = latent_to_channels_last(latent);  // (B, T, F, Cz): small next to any stage
  // Latent t ≥ 1 owns mel frames 4t − 3 … 4t; latent 0 owns frame 0.
  auto mel_start = [](int64_t t) { return t == 0 ? int64_t{0} : 4 * t - 3; };
  // Every chunk uses windows of the same lengths (a window at a sequence end is shifted inward, so
  // it only gains context): the same shapes each chunk let the storage cache and the primitive
  // caches reuse the first chunk's buffers, so memory stays flat however many chunks there are.
  const int64_t wc = std::min(M, 4 * chunk + ctx.stage_c_left + ctx.stage_c_right);
  const int64_t wb = std::min(M, wc + 2 * ctx.stage_b_mels);
  const int64_t wa = std::min(T, ctx.stage_a_latents + 2 + (wb + 3) / 4);
  auto place = [](int64_t want, int64_t len, int64_t total) {
    return std::clamp<int64_t>(want, 0, total - len);
  };
  Tensor out;
  const int64_t n = (T + chunk - 1) / chunk;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t t0 = k * chunk, t1 = std::min(T, t0 + chunk);
    const int64_t m0 = mel_start(t0), m1 = mel_start(t1);  // kept mel frames [m0, m1), ≤ 4·chunk
    // Windows, widest first: Stage C input [c0, c1), Stage B input [b0, b1) (mel frames), and
    // the latents [a0, a1) whose Stage A output covers [b0, b1) with causal context. A window
    // edge at 0 or at the sequence end is the real end, handled exactly as decode() does.
    const int64_t c0 = place(m0 - ctx.stage_c_left, wc, M), c1 = c0 + wc;
    const int64_t b0 = place(c0 - ctx.stage_b_mels, wb, M), b1 = b0 + wb;
    const int64_t a0 = place((b0 + 3) / 4 - ctx.stage_a_latents, wa, T), a1 = a0 + wa;
    const bool covered = c0 <= std::max<int64_t>(0, m0 - ctx.stage_c_left) &&
                         c1 >= std::min(M, m1 + ctx.stage_c_right) &&
                         b0 <= std::max<int64_t>(0, c0 - ctx.stage_b_mels) &&
                         b1 >= std::min(M, c1 + ctx.stage_b_mels) &&
                         a0 <= std::max<int64_t>(0, (b0 + 3) / 4 - ctx.stage_a_latents) &&
                         b0 >= 4 * a0 && b1 <= 4 * a1 - 3;
    MESHNN_CHECK(covered, "decode_chunked: window of chunk ", k, " misses its context");
    // Stage A on latents [a0, a1): window mel row j is global row 4·a0 + j (the first-row drops
    // of the two ×2 levels cancel against the window's own), real rows 4(a1 − a0) − 3.
    // Each stage's output checked finite, naming the chunk and the first stage at fault.
    const int total = static_cast<int>(chain_.size());
    auto check = [&](const Tensor& y, int i) {
      check_stage_output(y, y.dim(1), kModelName,
                         detail::concat("chunk ", k + 1, "/", n, ", stage ", i + 1, "/", total,
                                        " (", chain_[i].name, ")"));
    };
    Tensor mel = chain_[0].node->run(lat.narrow(1, a0, a1 - a0), TimeShard(), a1 - a0);
    check(mel, 0);
    Tensor wav = chain_[1].node->run(mel.narrow(1, b0 - 4 * a0, b1 - b0));
    check(wav, 1);
    mel = Tensor();
    wav = wav.narrow(1, (c0 - b0) * hop, (c1 - c0) * hop);
    if (bwe_) {
      wav = chain_[2].node->run(wav);
      check(wav, 2);
    }
    const int64_t per_in = wav.dim(1) / (c1 - c0);
    MESHNN_DCHECK(per_in == per_mel, "output rate");
    Tensor kept = wav.narrow(1, (m0 - c0) * per_in, (m1 - m0) * per_in);
    if (!out.defined()) out = Tensor::empty({B, M * per_mel, kept.dim(2)});
    put_rows(out, kept, m0 * per_mel);
    if (progress) progress(static_cast<int>(k + 1), static_cast<int>(n), "chunk");
  }
  return out;
}

}  // namespace meshnn::models
