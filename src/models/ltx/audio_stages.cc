// The LTX audio decoder's Stage A (mel-VAE decoder) and Stage C (bandwidth extension): layers
// from the checkpoint (by the weights description) and each stage's one graph.
#include "models/ltx/audio_stages.h"

#include <algorithm>
#include <cmath>

#include "meshnn/ops/filter_design.h"
#include "models/common/audio_description.h"
#include "models/ltx/weights.h"
#include "ops/elementwise.h"
#include "ops/permute.h"

namespace meshnn::models {
namespace {

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
  return ops::deinterleave(x).reshape({2 * x.dim(0), x.dim(1), 1});
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

LtxAudioDecoder::MelVae::MelVae(const MelVae& o)
    : cfg(o.cfg),
      stats_std(o.stats_std),
      stats_mean(o.stats_mean),
      conv_in(o.conv_in),
      conv_out(o.conv_out),
      mid(o.mid),
      up(o.up),
      upsample_conv(o.upsample_conv) {}

LtxAudioDecoder::MelVae::MelVae(const AudioVaeDecoderConfig& c,
                                const std::map<std::string, Tensor>& state, Precision p)
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
graph::NodePtr LtxAudioDecoder::MelVae::build_graph() const {
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
Tensor LtxAudioDecoder::MelVae::forward(const Tensor& latent, const TimeShard& ts, int64_t real) {
  MESHNN_CHECK_AS(
      ShapeError,
      latent.rank() == 4 && latent.dim(2) == cfg.latent_mel_bins && latent.dim(3) == cfg.z_channels,
      "mel-VAE decoder: expected latent (B, T, ", cfg.latent_mel_bins, ", ", cfg.z_channels,
      ") channels-last, got ", shape_str(latent.shape()));
  if (!one_shot) one_shot = build_graph();
  return one_shot->run(latent, ts, real);
}

// ---- Stage C: bandwidth extension -------------------------------------------------------------

LtxAudioDecoder::Bwe::Bwe(const Bwe& o)
    : cfg(o.cfg),
      stft(o.stft),
      mel(o.mel),
      gen(o.gen),
      hann(o.hann),
      geom(o.geom),
      ratio(o.ratio) {}

LtxAudioDecoder::Bwe::Bwe(const BweConfig& c, const std::map<std::string, Tensor>& state,
                          Precision p)
    : cfg(c) {
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
Tensor LtxAudioDecoder::Bwe::add_clamp(std::vector<Tensor>& p) {
  ops::add_(p[0], p[1]);
  ops::clamp_(p[0], -1.f, 1.f);
  return p[0];
}

// 16 kHz rows (B, n, 2) → packed log-mel rows (B, n / hop, 2·num_mels): the causal STFT (left
// pad n_fft − hop zeros, no right pad), magnitudes, mel basis, log.
graph::NodePtr LtxAudioDecoder::Bwe::log_mel_graph() const {
  using namespace graph;
  const int64_t bins = cfg.n_fft / 2 + 1;
  std::vector<NodePtr> seq;
  seq.push_back(map_rows("stereo_to_batch", 1, stereo_to_batch));
  seq.push_back(conv_node(*stft, cfg.n_fft - cfg.hop_length, 0));
  seq.push_back(
      map_rows("stft_magnitude", 1, [bins](const Tensor& spec) { return magnitude(spec, bins); }));
  seq.push_back(conv_node(*mel));
  seq.push_back(map_rows("log_mel", 1, packed_log_mel));
  return sequence(std::move(seq));
}

// The BWE's one wiring: 16 kHz rows (B, n, 2) → 48 kHz rows (B, ratio·n, 2). The STFT path is
// causal; the skip path's resampler and the generator need look-ahead.
graph::NodePtr LtxAudioDecoder::Bwe::build_graph() const {
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
LtxAudioDecoder::StageC LtxAudioDecoder::Bwe::forward(const Tensor& x, const TimeShard& ts,
                                                      int64_t real, bool intermediates) {
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

}  // namespace meshnn::models
