#include "models/ltx/random.h"

#include <cmath>
#include <numbers>
#include <random>

#include "meshnn/io/safetensors.h"
#include "meshnn/ops/filter_design.h"
#include "models/common/audio_description.h"
#include "models/ltx/weights.h"
#include "ops/mel.h"

namespace meshnn::models {
namespace {

// Collects (key, shape, distribution) first and fills afterwards, in parallel, each tensor from
// its own counter-based stream (splitmix64 of seed and tensor index): fast, and independent of the
// thread count.
class Filler {
 public:
  explicit Filler(uint64_t seed) : seed_(seed) {}
  void normal(const std::string& key, const Shape& s, double stddev) {
    specs_.push_back({key, s, 0, stddev});
  }
  void uniform(const std::string& key, const Shape& s, double lo, double hi) {
    specs_.push_back({key, s, lo, hi, true});
  }
  void constant(const std::string& key, const Shape& s, double v) {
    specs_.push_back({key, s, v, v, true});
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
  std::vector<Spec> specs_;
  std::map<std::string, Tensor> fixed_;
};

// Fixed tensors of the BWE: the STFT basis (DFT rows times a periodic Hann window) and the
// Slaney mel filterbank, rounded to bf16 as in the real files.
Tensor stft_basis(int n) {
  const int bins = n / 2 + 1;
  Tensor fb({2 * bins, 1, n});
  for (int k = 0; k < bins; ++k)
    for (int t = 0; t < n; ++t) {
      const double w = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * t / n);
      const double ang = 2 * std::numbers::pi * k * t / n;
      fb.data<float>()[k * n + t] = round_to_bf16(static_cast<float>(std::cos(ang) * w));
      fb.data<float>()[(bins + k) * n + t] = round_to_bf16(static_cast<float>(-std::sin(ang) * w));
    }
  return fb;
}

Tensor mel_basis(const BweConfig& b) {
  ops::MelConfig mc;
  mc.sampling_rate = b.input_sampling_rate;
  mc.n_fft = b.n_fft;
  mc.num_mels = b.num_mels;
  mc.fmax = b.input_sampling_rate / 2.0;
  Tensor mb = ops::slaney_mel_filterbank(mc);
  for (int64_t i = 0; i < mb.numel(); ++i) mb.data<float>()[i] = round_to_bf16(mb.data<float>()[i]);
  return mb;
}

// The kaiser filter every Activation1d carries in the checkpoint (bf16-rounded).
Tensor kaiser_filter() {
  const std::vector<float> taps = ops::kaiser_sinc_filter1d(0.25, 0.3, 12);
  Tensor t({1, 1, 12});
  for (int i = 0; i < 12; ++i) t.data<float>()[i] = round_to_bf16(taps[i]);
  return t;
}

// Registers every tensor of the weights on `f`, in for_each_layer order (each random tensor's
// stream is its registration index, so the order fixes the values).
void register_all(const LtxWeights& w, const LtxAudioConfig& cfg, Filler& f) {
  using Kind = LayerDesc::Kind;
  w.for_each_layer([&](const LayerDesc& d) {
    const std::map<std::string, Shape> ts = d.tensors();
    switch (d.kind) {
      case Kind::conv1d:
      case Kind::conv2d:
      case Kind::conv_transpose1d:
        for (const auto& [k, s] : ts)
          if (s.size() > 1) f.normal(k, s, d.init_std);
        for (const auto& [k, s] : ts)
          if (s.size() == 1) {
            if (std::isnan(d.init_bias))
              f.normal(k, s, 0.02);
            else
              f.constant(k, s, d.init_bias);
          }
        break;
      case Kind::activation:
        for (const auto& [k, s] : ts) {
          if (s.size() == 1)
            f.normal(k, s, 0.2);
          else
            f.fixed(k, kaiser_filter());
        }
        break;
      case Kind::tensor:
        // The plain tensors by name.
        if (&d == &w.vae.stats_std)
          f.uniform(d.key, d.shape, 0.5, 1.5);
        else if (&d == &w.vae.stats_mean)
          f.normal(d.key, d.shape, 0.3);
        else if (&d == &w.bwe.stft_basis || &d == &w.bwe.inverse_stft_basis)
          f.fixed(d.key, stft_basis(cfg.bwe.n_fft));  // the inverse: stored as the forward basis
        else if (&d == &w.bwe.mel_basis)
          f.fixed(d.key, mel_basis(cfg.bwe));
        else
          MESHNN_CHECK(false, "random checkpoint: no rule for tensor '", d.key, "'");
        break;
    }
  });
}

}  // namespace

std::map<std::string, Tensor> random_ltx_state(const LtxAudioConfig& cfg, uint64_t seed) {
  Filler f(seed);
  register_all(ltx_weights(cfg), cfg, f);
  return f.fill();
}

void save_random_ltx23(const std::string& path, uint64_t seed) {
  const nlohmann::json config = ltx23_reference_config();
  const LtxAudioConfig cfg = parse_ltx_audio_config(config, "LTX-2.3 reference config");
  std::map<std::string, Tensor> bf;
  for (const auto& [k, t] : random_ltx_state(cfg, seed))
    bf[k] = t.to(DType::bf16);  // values are bf16-exact: lossless
  io::save_safetensors(path, bf, {{"config", config.dump()}});
}

}  // namespace meshnn::models
