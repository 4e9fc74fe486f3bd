#include "models/audio_description.h"

#include <cmath>

#include "meshnn/layers/activation.h"
#include "meshnn/layers/state_dict.h"
#include "meshnn/ops/filter_design.h"

namespace meshnn::models {

using Kind = LayerDesc::Kind;
using Role = LayerDesc::Role;

Shape LayerDesc::weight_shape() const {
  switch (kind) {
    case Kind::conv1d:
      return {c_out, c_in, kernel};
    case Kind::conv2d:
      return {c_out, c_in, kernel, kernel};
    case Kind::conv_transpose1d:
      return {c_in, c_out, kernel};
    case Kind::tensor:
      return shape;
    case Kind::activation:
      return {c_in};
  }
  return {};
}

std::map<std::string, Shape> LayerDesc::tensors() const {
  switch (kind) {
    case Kind::conv1d:
    case Kind::conv_transpose1d:
      return conv_tensor_names(key, weight_shape(), bias ? c_out : 0);
    case Kind::conv2d:
      return conv_tensor_names(key, weight_shape(), bias ? c_out : 0, /*wrapped=*/true);
    case Kind::activation:
      return layers::AntiAliasedActivation::tensor_names(
          key + ".", c_in, snake_beta ? layers::SnakeKind::snake_beta : layers::SnakeKind::snake,
          /*with_filters=*/true);
    case Kind::tensor:
      return {{key, shape}};
  }
  return {};
}

namespace {

// Any convolution entry: channels, kernel, random-init scale and time rate.
LayerDesc conv_layer(Kind kind, Role role, std::string key, int64_t ci, int64_t co, int64_t k,
                     double init_std, double rate) {
  LayerDesc d{kind, role, std::move(key)};
  d.c_in = ci;
  d.c_out = co;
  d.kernel = k;
  d.init_std = init_std;
  d.rate = rate;
  return d;
}

LayerDesc conv1d(Role role, std::string key, int64_t ci, int64_t co, int64_t k, int64_t dil,
                 bool bias, double init_std, double rate) {
  LayerDesc d = conv_layer(Kind::conv1d, role, std::move(key), ci, co, k, init_std, rate);
  d.dilation = dil;
  d.bias = bias;
  return d;
}

LayerDesc activation(Role role, std::string key, int64_t ch, bool beta, bool logscale,
                     double rate) {
  LayerDesc d{Kind::activation, role, std::move(key)};
  d.c_in = d.c_out = ch;
  d.snake_beta = beta;
  d.logscale = logscale;
  d.rate = rate;
  return d;
}

LayerDesc tensor(Role role, std::string key, Shape shape, bool optional = false) {
  LayerDesc d{Kind::tensor, role, std::move(key)};
  d.shape = std::move(shape);
  d.optional = optional;
  return d;
}

}  // namespace

// Key styles: ltx-core names the upsamplers ups.i and the AMP activations acts1.m / acts2.m;
// NVIDIA wraps each upsampler (ups.i.0) and keeps one activation list per block, pairing
// activations[2m] (before convs1[m]) with activations[2m + 1] (before convs2[m]).
// init_std: the random-checkpoint scales (weights N(0, std²), std = scale / √fan).
ModelDesc describe_generator(const GeneratorConfig& g, const std::string& p) {
  const bool nvidia = g.keys == GeneratorConfig::KeyStyle::nvidia;
  const bool beta = g.activation == GeneratorConfig::Act::snakebeta;
  const size_t nk = g.resblock_kernel_sizes.size();
  ModelDesc out;
  out.push_back(conv1d(Role::conv_pre, p + "conv_pre", g.in_channels, g.upsample_initial_channel, 7,
                       1, true, 0.5 / std::sqrt(g.in_channels * 7.0), 1));
  double rate = 1;
  for (int i = 0; i < g.num_stages(); ++i) {
    const int64_t ci = g.upsample_initial_channel >> i, co = g.stage_channels(i);
    const int64_t k = g.upsample_kernel_sizes[i], u = g.upsample_rates[i];
    LayerDesc up = conv_layer(Kind::conv_transpose1d, Role::ups,
                              p + "ups." + std::to_string(i) + (nvidia ? ".0" : ""), ci, co, k,
                              1.0 / std::sqrt(static_cast<double>(ci * k) / u), rate);
    up.stride = u;
    up.stage = i;
    out.push_back(up);
    rate *= u;
    for (size_t j = 0; j < nk; ++j) {
      const int r = static_cast<int>(i * nk + j);
      const std::string rp = p + "resblocks." + std::to_string(r) + ".";
      const int64_t ks = g.resblock_kernel_sizes[j];
      const auto& dils = g.resblock_dilation_sizes[j];
      for (size_t m = 0; m < dils.size(); ++m) {
        const std::string ms = std::to_string(m);
        auto place = [&](LayerDesc d) {
          d.stage = i;
          d.block = r;
          d.index = static_cast<int>(m);
          out.push_back(std::move(d));
        };
        if (g.block == GeneratorConfig::Block::amp2) {
          place(conv1d(Role::convs1, rp + "convs." + ms, co, co, ks, dils[m], true,
                       1.0 / std::sqrt(static_cast<double>(co * ks)), rate));
          place(
              activation(Role::acts1, rp + "activations." + ms, co, beta, g.snake_logscale, rate));
          continue;
        }
        place(conv1d(Role::convs1, rp + "convs1." + ms, co, co, ks, dils[m], true,
                     1.0 / std::sqrt(static_cast<double>(co * ks)), rate));
        place(conv1d(Role::convs2, rp + "convs2." + ms, co, co, ks, 1, true,
                     0.4 / std::sqrt(static_cast<double>(co * ks)), rate));
        if (g.block == GeneratorConfig::Block::amp1) {
          const std::string a1 = nvidia ? "activations." + std::to_string(2 * m) : "acts1." + ms;
          const std::string a2 =
              nvidia ? "activations." + std::to_string(2 * m + 1) : "acts2." + ms;
          place(activation(Role::acts1, rp + a1, co, beta, g.snake_logscale, rate));
          place(activation(Role::acts2, rp + a2, co, beta, g.snake_logscale, rate));
        }
      }
    }
  }
  const int64_t last = g.stage_channels(g.num_stages() - 1);
  if (g.block != GeneratorConfig::Block::hifigan1)
    // ltx-core's act_post is always SnakeBeta; NVIDIA's follows the config.
    out.push_back(activation(Role::act_post, p + (nvidia ? "activation_post" : "act_post"), last,
                             nvidia ? beta : true, g.snake_logscale, rate));
  // conv_post's scale is the caller's (see describe_ltx); NVIDIA files are never random here.
  out.push_back(conv1d(Role::conv_post, p + "conv_post", last, g.out_channels, 7, 1,
                       g.use_bias_at_final, 0.5 / std::sqrt(last * 7.0), rate));
  return out;
}

ModelDesc describe_mel_vae(const AudioVaeDecoderConfig& v) {
  const std::string st = "audio_vae.per_channel_statistics.", d = "audio_vae.decoder.";
  const int64_t feats = static_cast<int64_t>(v.z_channels) * v.latent_mel_bins;
  ModelDesc out;
  out.push_back(tensor(Role::stats_std, st + "std-of-means", {feats}));
  out.push_back(tensor(Role::stats_mean, st + "mean-of-means", {feats}));
  const int levels = static_cast<int>(v.ch_mult.size());
  // Time rate and mel width at each run-order level: ×2 per upsample.
  double rate = 1;
  int64_t width = v.latent_mel_bins;
  auto conv = [&](Role role, std::string key, int64_t ci, int64_t co, int64_t k, double scale) {
    LayerDesc c = conv_layer(Kind::conv2d, role, std::move(key), ci, co, k,
                             scale / std::sqrt(static_cast<double>(ci * k * k)), rate);
    c.width = width;
    return c;
  };
  int64_t ch = static_cast<int64_t>(v.ch) * v.ch_mult.back();
  out.push_back(conv(Role::conv_in, d + "conv_in", v.z_channels, ch, 3, 1.0));
  auto res = [&](const std::string& p, int stage, int block, int64_t ci, int64_t co) {
    for (LayerDesc c : {conv(Role::res_conv1, p + "conv1", ci, co, 3, 1.0),
                        conv(Role::res_conv2, p + "conv2", co, co, 3, 0.5)}) {
      c.stage = stage;
      c.block = block;
      out.push_back(std::move(c));
    }
    if (ci != co) {
      LayerDesc c = conv(Role::res_shortcut, p + "nin_shortcut", ci, co, 1, 0.5);
      c.stage = stage;
      c.block = block;
      out.push_back(std::move(c));
    }
  };
  res(d + "mid.block_1.", -1, 0, ch, ch);
  res(d + "mid.block_2.", -1, 1, ch, ch);
  for (int l = levels - 1; l >= 0; --l) {
    const int run = levels - 1 - l;  // run-order level
    const int64_t co = static_cast<int64_t>(v.ch) * v.ch_mult[l];
    for (int i = 0; i <= v.num_res_blocks; ++i) {
      res(d + "up." + std::to_string(l) + ".block." + std::to_string(i) + ".", run, i, ch, co);
      ch = co;
    }
    if (l != 0) {
      rate *= 2;
      width *= 2;
      LayerDesc c = conv(Role::upsample_conv, d + "up." + std::to_string(l) + ".upsample.conv", ch,
                         ch, 3, 1.0);
      c.stage = run;
      out.push_back(std::move(c));
    }
  }
  // A log-mel-like output around −5 in random checkpoints.
  LayerDesc c = conv(Role::conv_out, d + "conv_out", ch, v.out_ch, 3, 1.5);
  c.init_bias = -5.0;
  out.push_back(std::move(c));
  return out;
}

ModelDesc describe_bwe(const BweConfig& b) {
  const int64_t bins = b.n_fft / 2 + 1;
  ModelDesc out;
  out.push_back(
      tensor(Role::stft_basis, "vocoder.mel_stft.stft_fn.forward_basis", {2 * bins, 1, b.n_fft}));
  // Decode never reads the inverse basis; real checkpoints carry it.
  out.push_back(tensor(Role::inverse_stft_basis, "vocoder.mel_stft.stft_fn.inverse_basis",
                       {2 * bins, 1, b.n_fft}, /*optional=*/true));
  out.push_back(tensor(Role::mel_basis, "vocoder.mel_stft.mel_basis", {b.num_mels, bins}));
  ModelDesc gen = describe_generator(b.generator, bwe_generator_prefix());
  // The generator runs on STFT frames: hop_length input samples per frame.
  gen.back().init_std = 0.05 / std::sqrt(gen.back().c_in * 7.0);
  out.insert(out.end(), gen.begin(), gen.end());
  return out;
}

std::string nvidia_generator_prefix(const std::map<std::string, Tensor>& state,
                                    const GeneratorConfig& cfg) {
  // Any accepted spelling of conv_pre's weight (plain, weight norm, parametrised) has a key that
  // starts with "<prefix>conv_pre.".
  auto has_layer = [&](const std::string& prefix) {
    const std::string first = describe_generator(cfg, prefix).front().key + ".";
    auto it = state.lower_bound(first);
    return it != state.end() && it->first.rfind(first, 0) == 0;
  };
  return !has_layer("") && has_layer("generator.") ? "generator." : "";
}

std::string bwe_generator_prefix() { return "vocoder.bwe_generator."; }

bool is_ltx_audio_key(const std::string& key) {
  return key.rfind("audio_vae.", 0) == 0 || key.rfind("vocoder.", 0) == 0;
}

bool is_ltx_encoder_key(const std::string& key) { return key.rfind("audio_vae.encoder.", 0) == 0; }

std::string ltx_vocoder_prefix(const LtxAudioConfig& cfg) {
  // LTX-2.3 nests the main generator under vocoder.vocoder.; LTX-2 is flat under vocoder.
  return cfg.version == LtxAudioConfig::Version::ltx23 ? "vocoder.vocoder." : "vocoder.";
}

ModelDesc describe_ltx(const LtxAudioConfig& cfg) {
  ModelDesc out = describe_mel_vae(cfg.vae);
  const bool v23 = cfg.version == LtxAudioConfig::Version::ltx23;
  ModelDesc voc = describe_generator(cfg.vocoder, ltx_vocoder_prefix(cfg));
  voc.back().init_std = (v23 ? 0.08 : 0.5) / std::sqrt(voc.back().c_in * 7.0);
  out.insert(out.end(), voc.begin(), voc.end());
  if (v23) {
    const ModelDesc bwe = describe_bwe(cfg.bwe);
    out.insert(out.end(), bwe.begin(), bwe.end());
  }
  return out;
}

std::map<std::string, Shape> required_shapes(const ModelDesc& desc, bool with_optional) {
  std::map<std::string, Shape> out;
  for (const LayerDesc& d : desc) {
    if (d.optional && !with_optional) continue;
    for (const auto& [k, s] : d.tensors()) {
      // The activation filters are computed when absent.
      const bool filter = d.kind == Kind::activation && s.size() == 3;
      if (!filter || with_optional) out[k] = s;
    }
  }
  return out;
}

double flops(const ModelDesc& desc, int64_t frames) {
  double f = 0;
  for (const LayerDesc& d : desc) {
    const double rows = d.rate * static_cast<double>(frames);
    switch (d.kind) {
      case Kind::conv1d:
        f += 2.0 * d.c_in * d.c_out * d.kernel * rows;
        break;
      case Kind::conv_transpose1d:
        f += 2.0 * d.c_in * d.c_out * d.kernel * rows;
        break;
      case Kind::conv2d:
        f += 2.0 * d.c_in * d.c_out * d.kernel * d.kernel * rows * static_cast<double>(d.width);
        break;
      default:
        break;
    }
  }
  return f;
}

std::vector<const LayerDesc*> with_role(const ModelDesc& desc, Role role) {
  std::vector<const LayerDesc*> out;
  for (const LayerDesc& d : desc)
    if (d.role == role) out.push_back(&d);
  return out;
}

}  // namespace meshnn::models
