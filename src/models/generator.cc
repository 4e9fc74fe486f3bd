#include "models/generator.h"

#include <algorithm>

#include "meshnn/core/profile.h"
#include "ops/elementwise.h"

namespace meshnn::models {
namespace {

std::string key(const std::string& prefix, const std::string& rest) { return prefix + rest; }

// Conv1d "same" (dilated) with bias, as every resblock conv and conv_pre/conv_post are.
Conv1d make_conv(const std::map<std::string, Tensor>& state, const std::string& k,
                                  int64_t ci, int64_t co, int64_t ksize, int64_t dil, bool bias,
                                  Precision precision) {
  Conv1dConfig c;
  c.in_channels = ci;
  c.out_channels = co;
  c.kernel_size = ksize;
  c.dilation = dil;
  c.bias = bias;
  c.precision = precision;
  Conv1d conv(c, k);
  conv.load(state, k);
  return conv;
}

layers::SnakeKind snake_kind(GeneratorConfig::Act a) {
  return a == GeneratorConfig::Act::snake ? layers::SnakeKind::snake : layers::SnakeKind::snake_beta;
}

layers::AntiAliasedActivation make_act(const std::map<std::string, Tensor>& state,
                                                        const std::string& prefix, int64_t ch,
                                                        const GeneratorConfig& cfg,
                                                        layers::SnakeKind kind) {
  layers::AntiAliasedActivation a(prefix, ch, kind, cfg.snake_logscale);
  a.load_state_dict(state, prefix);
  return a;
}

}  // namespace

Tensor Generator::Block::forward(const Tensor& x_in, const TimeShard& ts, int64_t real) {
  Tensor x = [&] {
    ProfileScope prof("block_clone");
    return x_in.clone();
  }();
  for (size_t j = 0; j < convs1.size(); ++j) {
    Tensor t;
    if (type == GeneratorConfig::Block::hifigan1) {
      t = x.clone();
      ops::leaky_relu_(t, slope);
    } else {
      t = activation_sharded(acts1[j], x, ts, real);
    }
    t = conv1d_sharded(convs1[j], t, ts, real);
    if (type != GeneratorConfig::Block::amp2) {
      if (type == GeneratorConfig::Block::hifigan1) ops::leaky_relu_(t, slope);
      else t = activation_sharded(acts2[j], t, ts, real);
      t = conv1d_sharded(convs2[j], t, ts, real);
    }
    ProfileScope prof("residual_add");
    ops::add_(x, t);
  }
  return x;
}

Generator::Generator(const GeneratorConfig& cfg, const std::map<std::string, Tensor>& state,
                     const std::string& prefix, Precision precision)
    : cfg_(cfg) {
  cfg_.validate(prefix);
  const bool nvidia = cfg_.keys == GeneratorConfig::KeyStyle::nvidia;
  const auto kind = snake_kind(cfg_.activation);
  conv_pre_ = make_conv(state, key(prefix, "conv_pre"), cfg_.in_channels,
                        cfg_.upsample_initial_channel, 7, 1, true, precision);
  const int n_k = static_cast<int>(cfg_.resblock_kernel_sizes.size());
  for (int i = 0; i < cfg_.num_stages(); ++i) {
    ConvTranspose1dConfig c;
    c.in_channels = cfg_.upsample_initial_channel >> i;
    c.out_channels = cfg_.stage_channels(i);
    c.kernel_size = cfg_.upsample_kernel_sizes[i];
    c.stride = cfg_.upsample_rates[i];
    c.precision = precision;
    const std::string k = key(prefix, "ups." + std::to_string(i) + (nvidia ? ".0" : ""));
    ConvTranspose1d up(c, k);
    up.load(state, k);
    ups_.push_back(std::move(up));
    const int64_t ch = cfg_.stage_channels(i);
    for (int j = 0; j < n_k; ++j) {
      const int r = i * n_k + j;
      const std::string rp = key(prefix, "resblocks." + std::to_string(r) + ".");
      Block b;
      b.type = cfg_.block;
      b.slope = cfg_.lrelu_slope;
      const int64_t ks = cfg_.resblock_kernel_sizes[j];
      const auto& dils = cfg_.resblock_dilation_sizes[j];
      for (size_t m = 0; m < dils.size(); ++m) {
        const std::string ms = std::to_string(m);
        if (cfg_.block == GeneratorConfig::Block::amp2) {
          b.convs1.push_back(make_conv(state, rp + "convs." + ms, ch, ch, ks, dils[m], true, precision));
          b.acts1.push_back(make_act(state, rp + "activations." + ms + ".", ch, cfg_, kind));
          continue;
        }
        b.convs1.push_back(make_conv(state, rp + "convs1." + ms, ch, ch, ks, dils[m], true, precision));
        b.convs2.push_back(make_conv(state, rp + "convs2." + ms, ch, ch, ks, 1, true, precision));
        if (cfg_.block == GeneratorConfig::Block::amp1) {
          // NVIDIA keeps one list and pairs activations[2m] (before convs1[m]) with
          // activations[2m + 1] (before convs2[m]); ltx-core names them acts1[m] / acts2[m].
          const std::string a1 = nvidia ? "activations." + std::to_string(2 * m) + "." : "acts1." + ms + ".";
          const std::string a2 = nvidia ? "activations." + std::to_string(2 * m + 1) + "." : "acts2." + ms + ".";
          b.acts1.push_back(make_act(state, rp + a1, ch, cfg_, kind));
          b.acts2.push_back(make_act(state, rp + a2, ch, cfg_, kind));
        }
      }
      blocks_.push_back(std::move(b));
    }
  }
  const int64_t ch_last = cfg_.stage_channels(cfg_.num_stages() - 1);
  if (cfg_.block != GeneratorConfig::Block::hifigan1) {
    // ltx-core's act_post is always SnakeBeta in AMP mode; NVIDIA follows the config.
    act_post_ = make_act(state, key(prefix, nvidia ? "activation_post." : "act_post."), ch_last, cfg_,
                         nvidia ? kind : layers::SnakeKind::snake_beta);
  }
  conv_post_ = make_conv(state, key(prefix, "conv_post"), ch_last, cfg_.out_channels, 7, 1,
                         cfg_.use_bias_at_final, precision);
}

Generator::~Generator() = default;
Generator::Generator(const Generator&) = default;
Generator::Generator(Generator&&) noexcept = default;

Tensor Generator::forward(const Tensor& x_in, const TimeShard& ts, int64_t real) {
  MESHNN_CHECK_AS(ShapeError, x_in.rank() == 3 && x_in.dim(2) == cfg_.in_channels,
                  "generator: expected input (B, T, ", cfg_.in_channels, "), got ",
                  shape_str(x_in.shape()));
  Tensor x = conv1d_sharded(*conv_pre_, x_in, ts, real);
  const int n_k = static_cast<int>(cfg_.resblock_kernel_sizes.size());
  for (int i = 0; i < cfg_.num_stages(); ++i) {
    if (cfg_.block == GeneratorConfig::Block::hifigan1) ops::leaky_relu_(x, cfg_.lrelu_slope);
    x = conv_transpose1d_sharded(ups_[i], x, ts, real);
    real *= cfg_.upsample_rates[i];
    // All blocks of a stage see the same input; the stage output is their mean (not the sum).
    std::vector<Tensor> outs;
    for (int j = 0; j < n_k; ++j) outs.push_back(blocks_[i * n_k + j].forward(x, ts, real));
    ProfileScope prof("stage_mean");
    if (n_k == 3) {
      ops::mean3(outs[0], outs[1], outs[2], outs[0]);
      x = outs[0];
    } else {
      x = outs[0].clone();
      for (int j = 1; j < n_k; ++j) ops::add_(x, outs[j]);
      float* p = x.data<float>();
      for (int64_t e = 0; e < x.numel(); ++e) p[e] /= static_cast<float>(n_k);
    }
  }
  if (cfg_.block == GeneratorConfig::Block::hifigan1) ops::leaky_relu_(x, cfg_.post_lrelu_slope);
  else x = activation_sharded(*act_post_, x, ts, real);
  x = conv1d_sharded(*conv_post_, x, ts, real);
  if (cfg_.apply_final_activation) {
    if (cfg_.use_tanh_at_final) ops::tanh_(x);
    else ops::clamp_(x, -1.f, 1.f);
  }
  return x;
}

int64_t Generator::context_frames() const {
  // Walk back from one output row: h = rows needed each side at the current rate.
  const int64_t act = layers::AntiAliasedActivation::context_rows();
  const bool hifi = cfg_.block == GeneratorConfig::Block::hifigan1;
  int64_t h = 3 + (hifi ? 0 : act);  // conv_post k7, act_post
  for (int i = cfg_.num_stages() - 1; i >= 0; --i) {
    int64_t stage = 0;  // the stage output is a mean over blocks: the widest block counts
    for (size_t j = 0; j < cfg_.resblock_kernel_sizes.size(); ++j) {
      const int64_t k = cfg_.resblock_kernel_sizes[j];
      int64_t b = 0;
      for (int d : cfg_.resblock_dilation_sizes[j]) {
        b += d * (k - 1) / 2 + (hifi ? 0 : act);
        if (cfg_.block != GeneratorConfig::Block::amp2) b += (k - 1) / 2 + (hifi ? 0 : act);
      }
      stage = std::max(stage, b);
    }
    h += stage;
    // Transposed conv, stride s, kernel k: output row o reads inputs within (o + k) / s of o / s.
    const int64_t s = cfg_.upsample_rates[i], k = cfg_.upsample_kernel_sizes[i];
    h = (h + s - 1) / s + (k + s - 1) / s + 1;
  }
  return h + 3 + 1;  // conv_pre k7, one frame of margin
}

double Generator::flops(int64_t frames) const {
  double f = 2.0 * cfg_.in_channels * cfg_.upsample_initial_channel * 7 * frames;
  int64_t t = frames;
  for (int i = 0; i < cfg_.num_stages(); ++i) {
    const double ci = cfg_.upsample_initial_channel >> i, co = cfg_.stage_channels(i);
    f += 2.0 * ci * co * cfg_.upsample_kernel_sizes[i] * t;
    t *= cfg_.upsample_rates[i];
    for (size_t j = 0; j < cfg_.resblock_kernel_sizes.size(); ++j) {
      const double convs = static_cast<double>(cfg_.resblock_dilation_sizes[j].size()) *
                           (cfg_.block == GeneratorConfig::Block::amp2 ? 1 : 2);
      f += 2.0 * co * co * cfg_.resblock_kernel_sizes[j] * convs * static_cast<double>(t);
    }
  }
  f += 2.0 * cfg_.stage_channels(cfg_.num_stages() - 1) * cfg_.out_channels * 7 * t;
  return f;
}

}  // namespace meshnn::models
