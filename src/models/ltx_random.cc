#include "models/ltx_random.h"

#include <cmath>
#include <numbers>
#include <random>

#include "meshnn/ops/filter_design.h"
#include "ops/mel.h"

namespace meshnn::models {
namespace {

// Collects (key, shape, distribution) first and fills afterwards, in parallel, each tensor from
// its own counter-based stream (splitmix64 of seed and tensor index): fast, and independent of the
// thread count.
class Filler {
 public:
  explicit Filler(uint64_t seed, bool shapes_only = false)
      : seed_(seed), shapes_only_(shapes_only) {}
  // Shape enumeration only (ltx_required_shapes / ltx_known_shapes): fixed tensors are not
  // computed, which keeps checking a checkpoint against its config cheap.
  bool shapes_only() const { return shapes_only_; }
  void fixed_shape(const std::string& key, const Shape& s) { fixed_shapes_[key] = s; }
  void normal(const std::string& key, const Shape& s, double stddev) { specs_.push_back({key, s, 0, stddev}); }
  void uniform(const std::string& key, const Shape& s, double lo, double hi) { specs_.push_back({key, s, lo, hi, true}); }
  void constant(const std::string& key, const Shape& s, double v) { specs_.push_back({key, s, v, v, true}); }
  std::map<std::string, Shape> shapes() const {
    std::map<std::string, Shape> m;
    for (const auto& [k, t] : fixed_) m[k] = t.shape();
    for (const auto& [k, sh] : fixed_shapes_) m[k] = sh;
    for (const Spec& sp : specs_) m[sp.key] = sp.shape;
    return m;
  }
  // A fixed tensor (filters, bases) added after the random ones.
  void fixed(const std::string& key, Tensor t) { fixed_[key] = std::move(t); }

  std::map<std::string, Tensor> fill() {
    std::vector<Tensor> out(specs_.size());
    for (size_t i = 0; i < specs_.size(); ++i) out[i] = Tensor::empty(specs_[i].shape);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < specs_.size(); ++i) {
      const Spec& sp = specs_[i];
      uint64_t state = seed_ * 0x9E3779B97F4A7C15ull + i + 1;
      float* p = out[i].data<float>();
      const int64_t n = out[i].numel();
      for (int64_t e = 0; e < n; e += 2) {
        const double u1 = (static_cast<double>(splitmix(state) >> 11) + 0.5) * 0x1p-53;
        const double u2 = (static_cast<double>(splitmix(state) >> 11) + 0.5) * 0x1p-53;
        double v0, v1;
        if (sp.is_uniform) {
          v0 = sp.a + (sp.b - sp.a) * u1;
          v1 = sp.a + (sp.b - sp.a) * u2;
        } else {  // Box–Muller
          const double r = std::sqrt(-2.0 * std::log(u1)) * sp.b;
          v0 = r * std::cos(2 * std::numbers::pi * u2);
          v1 = r * std::sin(2 * std::numbers::pi * u2);
        }
        p[e] = round_to_bf16(static_cast<float>(v0));
        if (e + 1 < n) p[e + 1] = round_to_bf16(static_cast<float>(v1));
      }
    }
    std::map<std::string, Tensor> st = fixed_;
    for (size_t i = 0; i < specs_.size(); ++i) st[specs_[i].key] = out[i];
    return st;
  }

 private:
  struct Spec {
    std::string key;
    Shape shape;
    double a, b;
    bool is_uniform = false;
  };
  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t seed_;
  bool shapes_only_ = false;
  std::map<std::string, Shape> fixed_shapes_;
  std::vector<Spec> specs_;
  std::map<std::string, Tensor> fixed_;
};

// Weight N(0, (scale/√fan)²) and bias N(0, 0.02²) of length `bias_len`.
void conv(Filler& f, const std::string& k, const Shape& w, double scale, double fan, int64_t bias_len) {
  f.normal(k + ".weight", w, scale / std::sqrt(fan));
  if (bias_len > 0) f.normal(k + ".bias", {bias_len}, 0.02);
}

void conv2d(Filler& f, const std::string& k, int64_t ci, int64_t co, int64_t ks, double scale) {
  conv(f, k + ".conv", {co, ci, ks, ks}, scale, static_cast<double>(ci * ks * ks), co);
}

// The two (1, 1, 12) kaiser buffers every Activation1d carries in the checkpoint, rounded to bf16
// as in the real (bf16) LTX files.
void act_filters(Filler& f, const std::string& prefix) {
  if (f.shapes_only()) {
    f.fixed_shape(prefix + "upsample.filter", {1, 1, 12});
    f.fixed_shape(prefix + "downsample.lowpass.filter", {1, 1, 12});
    return;
  }
  const std::vector<float> taps = ops::kaiser_sinc_filter1d(0.25, 0.3, 12);
  Tensor t({1, 1, 12});
  for (int i = 0; i < 12; ++i) t.data<float>()[i] = round_to_bf16(taps[i]);
  f.fixed(prefix + "upsample.filter", t);
  f.fixed(prefix + "downsample.lowpass.filter", t.clone());
}

void generator(Filler& f, const GeneratorConfig& g, const std::string& p,
               double post_scale) {
  conv(f, p + "conv_pre", {g.upsample_initial_channel, g.in_channels, 7}, 0.5, g.in_channels * 7.0,
       g.upsample_initial_channel);
  const size_t nk = g.resblock_kernel_sizes.size();
  for (int i = 0; i < g.num_stages(); ++i) {
    const int64_t ci = g.upsample_initial_channel >> i, co = g.stage_channels(i);
    const int64_t k = g.upsample_kernel_sizes[i], u = g.upsample_rates[i];
    conv(f, p + "ups." + std::to_string(i), {ci, co, k}, 1.0, static_cast<double>(ci * k) / u, co);
    for (size_t j = 0; j < nk; ++j) {
      const std::string r = p + "resblocks." + std::to_string(i * nk + j) + ".";
      const int64_t ks = g.resblock_kernel_sizes[j];
      for (size_t m = 0; m < g.resblock_dilation_sizes[j].size(); ++m) {
        const std::string ms = std::to_string(m);
        conv(f, r + "convs1." + ms, {co, co, ks}, 1.0, static_cast<double>(co * ks), co);
        conv(f, r + "convs2." + ms, {co, co, ks}, 0.4, static_cast<double>(co * ks), co);
        if (g.block == GeneratorConfig::Block::amp1)
          for (const char* a : {"acts1.", "acts2."}) {
            f.normal(r + a + ms + ".act.alpha", {co}, 0.2);
            f.normal(r + a + ms + ".act.beta", {co}, 0.2);
            act_filters(f, r + a + ms + ".");
          }
      }
    }
  }
  const int64_t last = g.stage_channels(g.num_stages() - 1);
  if (g.block == GeneratorConfig::Block::amp1) {
    f.normal(p + "act_post.act.alpha", {last}, 0.2);
    f.normal(p + "act_post.act.beta", {last}, 0.2);
    act_filters(f, p + "act_post.");
  }
  conv(f, p + "conv_post", {g.out_channels, last, 7}, post_scale, last * 7.0,
       g.use_bias_at_final ? g.out_channels : 0);
}

// Registers every tensor of an LTX audio checkpoint (key, shape, how to fill it) on `f`.
void describe_ltx_state(const LtxAudioConfig& cfg, Filler& f) {
  const AudioVaeDecoderConfig& v = cfg.vae;
  const int64_t feats = static_cast<int64_t>(v.z_channels) * v.latent_mel_bins;
  f.uniform("audio_vae.per_channel_statistics.std-of-means", {feats}, 0.5, 1.5);
  f.normal("audio_vae.per_channel_statistics.mean-of-means", {feats}, 0.3);
  const std::string d = "audio_vae.decoder.";
  int64_t ch = static_cast<int64_t>(v.ch) * v.ch_mult.back();
  conv2d(f, d + "conv_in", v.z_channels, ch, 3, 1.0);
  auto res = [&](const std::string& p, int64_t ci, int64_t co) {
    conv2d(f, p + "conv1", ci, co, 3, 1.0);
    conv2d(f, p + "conv2", co, co, 3, 0.5);
    if (ci != co) conv2d(f, p + "nin_shortcut", ci, co, 1, 0.5);
  };
  res(d + "mid.block_1.", ch, ch);
  res(d + "mid.block_2.", ch, ch);
  for (int l = static_cast<int>(v.ch_mult.size()) - 1; l >= 0; --l) {
    const int64_t co = static_cast<int64_t>(v.ch) * v.ch_mult[l];
    for (int i = 0; i <= v.num_res_blocks; ++i) {
      res(d + "up." + std::to_string(l) + ".block." + std::to_string(i) + ".", ch, co);
      ch = co;
    }
    if (l != 0) conv2d(f, d + "up." + std::to_string(l) + ".upsample.conv", ch, ch, 3, 1.0);
  }
  f.normal(d + "conv_out.conv.weight", {v.out_ch, ch, 3, 3}, 1.5 / std::sqrt(ch * 9.0));
  f.constant(d + "conv_out.conv.bias", {v.out_ch}, -5.0);  // a log-mel-like output around −5

  if (cfg.version == LtxAudioConfig::Version::ltx23) {
    generator(f, cfg.vocoder, "vocoder.vocoder.", 0.08);
    generator(f, cfg.bwe.generator, "vocoder.bwe_generator.", 0.05);
    const int n = cfg.bwe.n_fft, bins = n / 2 + 1;
    if (f.shapes_only()) {
      f.fixed_shape("vocoder.mel_stft.stft_fn.forward_basis", {2 * bins, 1, n});
      f.fixed_shape("vocoder.mel_stft.stft_fn.inverse_basis", {2 * bins, 1, n});
      f.fixed_shape("vocoder.mel_stft.mel_basis", {cfg.bwe.num_mels, bins});
      return;
    }
    Tensor fb({2 * bins, 1, n});
    for (int k = 0; k < bins; ++k)
      for (int t = 0; t < n; ++t) {
        const double w = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * t / n);
        const double ang = 2 * std::numbers::pi * k * t / n;
        fb.data<float>()[k * n + t] = round_to_bf16(static_cast<float>(std::cos(ang) * w));
        fb.data<float>()[(bins + k) * n + t] = round_to_bf16(static_cast<float>(-std::sin(ang) * w));
      }
    f.fixed("vocoder.mel_stft.stft_fn.forward_basis", fb);
    // Unused by decode; real checkpoints carry it. Stored as the forward basis (same shape).
    f.fixed("vocoder.mel_stft.stft_fn.inverse_basis", fb.clone());
    ops::MelConfig mc;
    mc.sampling_rate = cfg.bwe.input_sampling_rate;
    mc.n_fft = n;
    mc.num_mels = cfg.bwe.num_mels;
    mc.fmax = cfg.bwe.input_sampling_rate / 2.0;
    Tensor mb = ops::slaney_mel_filterbank(mc);
    for (int64_t i = 0; i < mb.numel(); ++i) mb.data<float>()[i] = round_to_bf16(mb.data<float>()[i]);
    f.fixed("vocoder.mel_stft.mel_basis", mb);
    return;
  }
  generator(f, cfg.vocoder, "vocoder.", 0.5);
}

}  // namespace

std::map<std::string, Tensor> random_ltx_state(const LtxAudioConfig& cfg, uint64_t seed) {
  Filler f(seed);
  describe_ltx_state(cfg, f);
  return f.fill();
}

std::map<std::string, Shape> ltx_known_shapes(const LtxAudioConfig& cfg) {
  Filler f(0, true);
  describe_ltx_state(cfg, f);
  return f.shapes();
}

std::map<std::string, Shape> ltx_required_shapes(const LtxAudioConfig& cfg) {
  Filler f(0, true);
  describe_ltx_state(cfg, f);
  std::map<std::string, Shape> out = f.shapes();
  // Decode computes these when absent (the kaiser taps) or never reads them (inverse basis).
  for (auto it = out.begin(); it != out.end();) {
    const std::string& k = it->first;
    const bool optional = k.ends_with(".upsample.filter") || k.ends_with(".downsample.lowpass.filter") ||
                          k.ends_with("stft_fn.inverse_basis");
    it = optional ? out.erase(it) : std::next(it);
  }
  return out;
}

}  // namespace meshnn::models
