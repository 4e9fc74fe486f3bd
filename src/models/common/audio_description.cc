#include "models/common/audio_description.h"

#include <cmath>

#include "meshnn/layers/activation.h"
#include "meshnn/layers/state_dict.h"
#include "meshnn/ops/filter_design.h"

namespace meshnn::models {

using Kind = LayerDesc::Kind;

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

// Any convolution entry: channels, kernel, random-init scale and time rate.
LayerDesc conv_layer(Kind kind, std::string key, int64_t ci, int64_t co, int64_t k, double init_std,
                     double rate) {
  LayerDesc d{kind, std::move(key)};
  d.c_in = ci;
  d.c_out = co;
  d.kernel = k;
  d.init_std = init_std;
  d.rate = rate;
  return d;
}

LayerDesc tensor_layer(std::string key, Shape shape, bool optional) {
  LayerDesc d{Kind::tensor, std::move(key)};
  d.shape = std::move(shape);
  d.optional = optional;
  return d;
}

namespace {

LayerDesc conv1d(std::string key, int64_t ci, int64_t co, int64_t k, int64_t dil, bool bias,
                 double init_std, double rate) {
  LayerDesc d = conv_layer(Kind::conv1d, std::move(key), ci, co, k, init_std, rate);
  d.dilation = dil;
  d.bias = bias;
  return d;
}

LayerDesc activation(std::string key, int64_t ch, bool beta, bool logscale, double rate) {
  LayerDesc d{Kind::activation, std::move(key)};
  d.c_in = d.c_out = ch;
  d.snake_beta = beta;
  d.logscale = logscale;
  d.rate = rate;
  return d;
}

}  // namespace

// Key styles: ltx-core names the upsamplers ups.i and the AMP activations acts1.m / acts2.m;
// NVIDIA wraps each upsampler (ups.i.0) and keeps one activation list per block, pairing
// activations[2m] (before convs1[m]) with activations[2m + 1] (before convs2[m]).
// init_std: the random-checkpoint scales (weights N(0, std²), std = scale / √fan).
GeneratorWeights generator_weights(const GeneratorConfig& g, const std::string& p) {
  const bool nvidia = g.keys == GeneratorConfig::KeyStyle::nvidia;
  const bool beta = g.activation == GeneratorConfig::Act::snakebeta;
  const size_t nk = g.resblock_kernel_sizes.size();
  GeneratorWeights w;
  w.conv_pre = conv1d(p + "conv_pre", g.in_channels, g.upsample_initial_channel, 7, 1, true,
                      0.5 / std::sqrt(g.in_channels * 7.0), 1);
  double rate = 1;
  for (int i = 0; i < g.num_stages(); ++i) {
    const int64_t ci = g.upsample_initial_channel >> i, co = g.stage_channels(i);
    const int64_t k = g.upsample_kernel_sizes[i], u = g.upsample_rates[i];
    GeneratorWeights::Stage& stage = w.stages.emplace_back();
    stage.up =
        conv_layer(Kind::conv_transpose1d, p + "ups." + std::to_string(i) + (nvidia ? ".0" : ""),
                   ci, co, k, 1.0 / std::sqrt(static_cast<double>(ci * k) / u), rate);
    stage.up.stride = u;
    stage.up.stage = i;
    rate *= u;
    for (size_t j = 0; j < nk; ++j) {
      const int r = static_cast<int>(i * nk + j);
      const std::string rp = p + "resblocks." + std::to_string(r) + ".";
      const int64_t ks = g.resblock_kernel_sizes[j];
      const auto& dils = g.resblock_dilation_sizes[j];
      GeneratorWeights::Block& block = stage.blocks.emplace_back();
      for (size_t m = 0; m < dils.size(); ++m) {
        const std::string ms = std::to_string(m);
        auto place = [&](std::vector<LayerDesc>& list, LayerDesc d) {
          d.stage = i;
          d.block = r;
          d.index = static_cast<int>(m);
          d.parallel = true;
          list.push_back(std::move(d));
        };
        if (g.block == GeneratorConfig::Block::amp2) {
          place(block.convs1, conv1d(rp + "convs." + ms, co, co, ks, dils[m], true,
                                     1.0 / std::sqrt(static_cast<double>(co * ks)), rate));
          place(block.acts1,
                activation(rp + "activations." + ms, co, beta, g.snake_logscale, rate));
          continue;
        }
        place(block.convs1, conv1d(rp + "convs1." + ms, co, co, ks, dils[m], true,
                                   1.0 / std::sqrt(static_cast<double>(co * ks)), rate));
        place(block.convs2, conv1d(rp + "convs2." + ms, co, co, ks, 1, true,
                                   0.4 / std::sqrt(static_cast<double>(co * ks)), rate));
        if (g.block == GeneratorConfig::Block::amp1) {
          const std::string a1 = nvidia ? "activations." + std::to_string(2 * m) : "acts1." + ms;
          const std::string a2 =
              nvidia ? "activations." + std::to_string(2 * m + 1) : "acts2." + ms;
          place(block.acts1, activation(rp + a1, co, beta, g.snake_logscale, rate));
          place(block.acts2, activation(rp + a2, co, beta, g.snake_logscale, rate));
        }
      }
    }
  }
  const int64_t last = g.stage_channels(g.num_stages() - 1);
  if (g.block != GeneratorConfig::Block::hifigan1) {
    // ltx-core's act_post is always SnakeBeta; NVIDIA's follows the config.
    w.has_act_post = true;
    w.act_post = activation(p + (nvidia ? "activation_post" : "act_post"), last,
                            nvidia ? beta : true, g.snake_logscale, rate);
  }
  // conv_post's scale is the caller's (see ltx_weights); NVIDIA files are never random here.
  w.conv_post = conv1d(p + "conv_post", last, g.out_channels, 7, 1, g.use_bias_at_final,
                       0.5 / std::sqrt(last * 7.0), rate);
  return w;
}

ModelDesc describe_generator(const GeneratorConfig& g, const std::string& p) {
  return flatten(generator_weights(g, p));
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

}  // namespace meshnn::models
