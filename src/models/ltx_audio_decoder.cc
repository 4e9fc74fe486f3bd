// The LTX-2 / LTX-2.3 audio decoder: mel-VAE, vocoder and BWE graphs, one-shot and chunked
// decode. Long (~590 lines): the mel-VAE and BWE are built here, beside the chain that runs them.
#include "models/ltx_audio_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "graph/graph.h"
#include "io/json.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/ops/filter_design.h"
#include "models/audio_description.h"
#include "ops/elementwise.h"

namespace meshnn::models {
namespace {
// The name the non-finite-output errors give (the public API reports the model under it too).
constexpr const char* kModelName = "LTX audio decoder";

// Denormalised latent: x · std + mean per patchified feature c·F + f. latent: (B, S, F, C)
// channels-last → the same shape.
Tensor denormalised(const Tensor& latent, const std::vector<float>& std_,
                    const std::vector<float>& mean, int64_t F, int64_t C) {
  Tensor x = latent.clone();
  float* p = x.data<float>();
  const int64_t rows_n = x.dim(0) * x.dim(1);
  for (int64_t r = 0; r < rows_n; ++r)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t c = 0; c < C; ++c) {
        float& v = p[(r * F + f) * C + c];
        v = v * std_[c * F + f] + mean[c * F + f];
      }
  return x;
}

// Stereo into the batch: (B, S, 2) → (2B, S, 1).
Tensor stereo_to_batch(const Tensor& x) {
  const int64_t B = x.dim(0), S = x.dim(1);
  Tensor planar = Tensor::empty({2 * B, S, 1});
  const float* s = x.data<float>();
  float* d = planar.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t)
      for (int64_t c = 0; c < 2; ++c) d[((b * 2 + c) * S) + t] = s[(b * S + t) * 2 + c];
  return planar;
}

// STFT rows (N, F, 2·bins) (real parts, then imaginary) → magnitudes (N, F, bins).
Tensor magnitude(const Tensor& spec, int64_t bins) {
  const int64_t N = spec.dim(0), F = spec.dim(1);
  Tensor mag = Tensor::empty({N, F, bins});
  const float* sp = spec.data<float>();
  float* m = mag.data<float>();
  for (int64_t r = 0; r < N * F; ++r)
    for (int64_t k = 0; k < bins; ++k) {
      const float re = sp[r * 2 * bins + k], im = sp[r * 2 * bins + bins + k];
      m[r * bins + k] = std::sqrt(re * re + im * im);  // no epsilon here (unlike BigVGAN's)
    }
  return mag;
}

// Mel (2B, F, M) → log-mel (B, F, 2M) packed as the BWE generator takes it (channel s·M + m).
Tensor packed_log_mel(const Tensor& melv) {
  const int64_t B = melv.dim(0) / 2, F = melv.dim(1), M = melv.dim(2);
  Tensor out = Tensor::empty({B, F, 2 * M});
  const float* mp = melv.data<float>();
  float* d = out.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t s = 0; s < 2; ++s)
        for (int64_t m = 0; m < M; ++m)
          d[(b * F + f) * 2 * M + s * M + m] =
              std::log(std::max(mp[((b * 2 + s) * F + f) * M + m], 1e-5f));
  return out;
}

}  // namespace

// ---- Stage A: mel-VAE decoder -------------------------------------------------------------------

struct LtxAudioDecoder::MelVae {
  struct ResBlock {
    std::optional<Conv2d> conv1, conv2, nin;
  };
  AudioVaeDecoderConfig cfg;
  std::vector<float> stats_std, stats_mean;  // (z_channels · latent_mel_bins), feature c·F + f
  std::optional<Conv2d> conv_in, conv_out;
  std::vector<ResBlock> mid;
  std::vector<std::vector<ResBlock>> up;             // run order: level L−1 … 0
  std::vector<std::optional<Conv2d>> upsample_conv;  // per run-order level (none for level 0)

  MelVae(const MelVae& o)
      : cfg(o.cfg),
        stats_std(o.stats_std),
        stats_mean(o.stats_mean),
        conv_in(o.conv_in),
        conv_out(o.conv_out),
        mid(o.mid),
        up(o.up),
        upsample_conv(o.upsample_conv) {}
  MelVae(const AudioVaeDecoderConfig& c, const std::map<std::string, Tensor>& state, Precision p)
      : cfg(c) {
    // The layers come from the model's weights description, by name.
    const MelVaeWeights w = mel_vae_weights(cfg);
    auto stats = [&](const LayerDesc& d) {
      const Tensor t = tensor_of(d, state);
      return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
    };
    stats_std = stats(w.stats_std);
    stats_mean = stats(w.stats_mean);
    auto res = [&](const MelVaeWeights::ResBlock& r) {
      ResBlock b;
      b.conv1 = build_causal_conv2d(r.conv1, state, p);
      b.conv2 = build_causal_conv2d(r.conv2, state, p);
      if (r.has_shortcut) b.nin = build_causal_conv2d(r.nin_shortcut, state, p);
      return b;
    };
    conv_in = build_causal_conv2d(w.conv_in, state, p);
    for (const MelVaeWeights::ResBlock& r : w.mid) mid.push_back(res(r));
    for (const MelVaeWeights::Level& l : w.levels) {
      up.emplace_back();
      for (const MelVaeWeights::ResBlock& r : l.blocks) up.back().push_back(res(r));
      upsample_conv.emplace_back();
      if (l.has_upsample) upsample_conv.back() = build_causal_conv2d(l.upsample_conv, state, p);
    }
    conv_out = build_causal_conv2d(w.conv_out, state, p);
  }

  // The mel-VAE's one wiring: latent rows (B, n, F, Cz) channels-last → log-mel rows (B, m, 64, 2)
  // (m = 4n − 3 for 3 levels). Every conv is causal in time, so a streamed row is final as soon as
  // its latent frame arrives. Residual block: PixelNorm → SiLU → conv1 → PixelNorm → SiLU → conv2,
  // + shortcut (h + skip).
  graph::NodePtr build_graph() const {
    using namespace graph;
    const float eps = cfg.pixel_norm_eps;
    auto pn_silu = [eps]() {
      return map_rows("pixel_norm_silu", 1, [eps](const Tensor& x) {
        Tensor h = Tensor::empty(x.shape());
        ops::pixel_norm_silu(x, h, eps);
        return h;
      });
    };
    auto res = [&](const ResBlock& b) {
      std::vector<NodePtr> branch;
      branch.push_back(pn_silu());
      branch.push_back(conv_node(*b.conv1));
      branch.push_back(pn_silu());
      branch.push_back(conv_node(*b.conv2));
      std::vector<NodePtr> paths;
      paths.push_back(b.nin ? conv_node(*b.nin) : identity());  // k1: no halo
      paths.push_back(sequence(std::move(branch)));
      return fork_join("vae_residual_add", std::move(paths), [](std::vector<Tensor>& p) {
        ops::add_(p[1], p[0]);  // h + skip
        return p[1];
      });
    };
    std::vector<NodePtr> seq;
    const std::vector<float> sd = stats_std, mn = stats_mean;
    const int64_t F = cfg.latent_mel_bins, C = cfg.z_channels;
    seq.push_back(map_rows("denormalise", 1, [sd, mn, F, C](const Tensor& latent) {
      return denormalised(latent, sd, mn, F, C);
    }));
    seq.push_back(conv_node(*conv_in));
    for (const ResBlock& b : mid) seq.push_back(res(b));
    for (size_t l = 0; l < up.size(); ++l) {
      for (const ResBlock& b : up[l]) seq.push_back(res(b));
      if (upsample_conv[l]) seq.push_back(upsample2x_causal_conv_node(*upsample_conv[l]));
    }
    seq.push_back(pn_silu());
    seq.push_back(conv_node(*conv_out));
    return sequence(std::move(seq));
  }

  // latent: (B, S, F, Cz) channels-last shard → (B, 4S, 64, 2) (for 3 levels); real T → 4T − 3.
  Tensor forward(const Tensor& latent, const TimeShard& ts, int64_t real) {
    MESHNN_CHECK_AS(ShapeError,
                    latent.rank() == 4 && latent.dim(2) == cfg.latent_mel_bins &&
                        latent.dim(3) == cfg.z_channels,
                    "mel-VAE decoder: expected latent (B, T, ", cfg.latent_mel_bins, ", ",
                    cfg.z_channels, ") channels-last, got ", shape_str(latent.shape()));
    if (!one_shot) one_shot = build_graph();
    return one_shot->run(latent, ts, real);
  }
  graph::NodePtr one_shot;  // forward()'s graph, built on first use (per runner copy)
};

// ---- Stage C: bandwidth extension -------------------------------------------------------------

struct LtxAudioDecoder::Bwe {
  BweConfig cfg;
  std::optional<Conv1d> stft;  // forward_basis as a strided conv: 1 → 2·bins, k n_fft, stride hop
  std::optional<Conv1d> mel;   // mel_basis as a k1 conv: bins → num_mels
  std::optional<Generator> gen;
  std::vector<float> hann;  // ×ratio resampler taps (computed; not in the checkpoint)
  ops::UpsampleGeometry geom;
  int ratio;

  Bwe(const Bwe& o)
      : cfg(o.cfg),
        stft(o.stft),
        mel(o.mel),
        gen(o.gen),
        hann(o.hann),
        geom(o.geom),
        ratio(o.ratio) {}
  Bwe(const BweConfig& c, const std::map<std::string, Tensor>& state, Precision p) : cfg(c) {
    const int64_t bins = cfg.n_fft / 2 + 1;
    const BweWeights w = bwe_weights(cfg);
    // The bases are stored (bf16-rounded from training) and used as stored, never recomputed.
    const Tensor fb = tensor_of(w.stft_basis, state);
    const Tensor mb = tensor_of(w.mel_basis, state);
    Conv1dConfig sc;
    sc.in_channels = 1;
    sc.out_channels = 2 * bins;
    sc.kernel_size = cfg.n_fft;
    sc.stride = cfg.hop_length;
    sc.padding = 0;  // the causal left pad comes from the halo
    sc.bias = false;
    sc.precision = Precision::fp32;  // fp32 required for Stage C
    stft.emplace(sc, "BWE STFT");
    stft->set_weights(fb, Tensor());
    Conv1dConfig mc;
    mc.in_channels = bins;
    mc.out_channels = cfg.num_mels;
    mc.kernel_size = 1;
    mc.bias = false;
    mel.emplace(mc, "BWE mel basis");
    mel->set_weights(mb.reshape({cfg.num_mels, bins, 1}), Tensor());
    gen.emplace(cfg.generator, state, bwe_generator_prefix(), p);
    ratio = cfg.output_sampling_rate / cfg.input_sampling_rate;
    hann = ops::hann_sinc_filter1d(ratio);
    geom = ops::hann_upsample_geometry(ratio);
  }

  // Residual + skip, clamped. p: {residual (B, n, 2), skip (B, n, 2)} → into p[0].
  static Tensor add_clamp(std::vector<Tensor>& p) {
    ops::add_(p[0], p[1]);
    ops::clamp_(p[0], -1.f, 1.f);
    return p[0];
  }
  // 16 kHz rows (B, n, 2) → packed log-mel rows (B, n / hop, 2·num_mels): the causal STFT (left
  // pad n_fft − hop zeros, no right pad), magnitudes, mel basis, log.
  graph::NodePtr log_mel_graph() const {
    using namespace graph;
    const int64_t bins = cfg.n_fft / 2 + 1;
    std::vector<NodePtr> seq;
    seq.push_back(map_rows("stereo_to_batch", 1, stereo_to_batch));
    seq.push_back(conv_node(*stft, cfg.n_fft - cfg.hop_length, 0));
    seq.push_back(map_rows("stft_magnitude", 1,
                           [bins](const Tensor& spec) { return magnitude(spec, bins); }));
    seq.push_back(conv_node(*mel));
    seq.push_back(map_rows("log_mel", 1, packed_log_mel));
    return sequence(std::move(seq));
  }
  // The BWE's one wiring: 16 kHz rows (B, n, 2) → 48 kHz rows (B, ratio·n, 2). The STFT path is
  // causal; the skip path's resampler and the generator need look-ahead.
  graph::NodePtr build_graph() const {
    using namespace graph;
    std::vector<NodePtr> residual;
    residual.push_back(log_mel_graph());
    residual.push_back(gen->graph());
    std::vector<NodePtr> paths;
    paths.push_back(sequence(std::move(residual)));
    paths.push_back(upsample_node(hann, geom));
    return fork_join("bwe_add_clamp", std::move(paths), add_clamp);
  }

  // x: (B, S, 2) 16 kHz shard with `real` samples → StageC (the graph's output, and its
  // intermediates when asked: tests compare them with the reference's).
  StageC forward(const Tensor& x, const TimeShard& ts, int64_t real, bool intermediates) {
    const int64_t S = x.dim(1), hop = cfg.hop_length;
    MESHNN_CHECK_AS(ShapeError, S % hop == 0 && real % hop == 0, "BWE: shard of ", S,
                    " samples and length ", real, " must be multiples of the STFT hop ", hop);
    StageC out;
    if (!intermediates) {
      if (!one_shot) one_shot = build_graph();
      out.out = one_shot->run(x, ts, real);
      return out;
    }
    // The graph's parts one by one (fresh nodes over the same layers).
    out.log_mel = log_mel_graph()->run(x, ts, real);  // (B, F, 2·num_mels)
    out.residual = gen->forward(out.log_mel, ts, real / hop);
    out.skip = graph::upsample_node(hann, geom)->run(x, ts, real);
    std::vector<Tensor> p{out.residual.clone(), out.skip};
    out.out = add_clamp(p);
    return out;
  }
  graph::NodePtr one_shot;  // forward()'s graph, built on first use (per runner copy)
};

// ---- the whole chain
// ------------------------------------------------------------------------------

std::unique_ptr<LtxAudioDecoder> LtxAudioDecoder::load(const io::SafetensorsFile& file,
                                                       const StagePrecision& precision,
                                                       const CheckpointCheckOptions& check) {
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
  std::map<std::string, Shape> shapes;
  for (const std::string& k : file.keys()) shapes.emplace(k, file.shape(k));
  require_ltx_checkpoint(cfg, shapes, check, file.path());
  std::map<std::string, Tensor> state;
  for (const std::string& k : file.keys())
    if (is_ltx_audio_key(k)) state.emplace(k, file.get(k));
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
  vae_ = std::make_unique<MelVae>(cfg_.vae, state, stage_precisions_[0]);
  const bool v23 = cfg_.version == LtxAudioConfig::Version::ltx23;
  vocoder_ = std::make_unique<Generator>(cfg_.vocoder, state, ltx_vocoder_prefix(cfg_),
                                         stage_precisions_[1]);
  if (v23) bwe_ = std::make_unique<Bwe>(cfg_.bwe, state, stage_precisions_[2]);
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
      bwe_(o.bwe_ ? std::make_unique<Bwe>(*o.bwe_) : nullptr) {}

int64_t LtxAudioDecoder::output_samples(int64_t t) const {
  const int64_t m = std::max<int64_t>(4 * t - 3, 1);
  int64_t l = m * cfg_.vocoder.hop();
  if (bwe_) l *= cfg_.bwe.output_sampling_rate / cfg_.bwe.input_sampling_rate;
  return l;
}

Tensor latent_to_channels_last(const Tensor& latent) {
  latent.check_dtype(DType::f32);
  const int64_t B = latent.dim(0), C = latent.dim(1), T = latent.dim(2), F = latent.dim(3);
  Tensor out = Tensor::empty({B, T, F, C});
  const float* s = latent.data<float>();
  float* d = out.data<float>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t f = 0; f < F; ++f)
          d[((b * T + t) * F + f) * C + c] = s[((b * C + c) * T + t) * F + f];
  return out;
}

Tensor LtxAudioDecoder::pack_mel(const Tensor& mel) {
  const int64_t B = mel.dim(0), S = mel.dim(1), M = mel.dim(2), C = mel.dim(3);
  Tensor out = Tensor::empty({B, S, C * M});
  const float* s = mel.data<float>();
  float* d = out.data<float>();
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c) d[r * C * M + c * M + m] = s[(r * M + m) * C + c];
  return out;
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

bool LtxAudioDecoder::mesh_fits(int64_t T, int devices) {
  return time_split_fits(T, devices, kMinFramesPerDevice);
}

void LtxAudioDecoder::check_mesh_fits(int64_t T, int devices) {
  check_time_split(T, devices, kMinFramesPerDevice, "latent");
}

int64_t LtxAudioDecoder::auto_chunk_frames(int64_t T) {
  return T > kAutoChunkAboveFrames ? kAutoChunkFrames : 0;
}

Tensor prepare_ltx_latent(const Tensor& latent, const std::string& name) {
  Tensor x = float_input(latent, name);
  if (x.rank() == 3) x = x.reshape({1, x.dim(0), x.dim(1), x.dim(2)});
  MESHNN_CHECK_AS(ShapeError, x.rank() == 4, name, ": expected (1, 8, T, 16) or (8, T, 16), got ",
                  shape_str(latent.shape()));
  MESHNN_CHECK_AS(ShapeError, x.dim(0) == 1, name, ": a batch of ", x.dim(0),
                  " latents; decode one latent per output file (batch 1)");
  MESHNN_CHECK_AS(ShapeError, x.dim(1) == 8 && x.dim(3) == 16 && x.dim(2) >= 1, name,
                  ": expected (1, 8, T, 16), got ", shape_str(x.shape()));
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
