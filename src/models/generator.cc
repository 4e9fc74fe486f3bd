#include "models/generator.h"

#include <algorithm>

#include "meshnn/core/profile.h"
#include "models/audio_description.h"
#include "ops/elementwise.h"

namespace meshnn::models {

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
      if (type == GeneratorConfig::Block::hifigan1)
        ops::leaky_relu_(t, slope);
      else
        t = activation_sharded(acts2[j], t, ts, real);
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
  blocks_.resize(cfg_.num_stages() * cfg_.resblock_kernel_sizes.size());
  for (Block& b : blocks_) {
    b.type = cfg_.block;
    b.slope = cfg_.lrelu_slope;
  }
  // The layers come from the model's description, in its order (stage by stage, block by block).
  using Role = LayerDesc::Role;
  for (const LayerDesc& d : describe_generator(cfg_, prefix)) {
    switch (d.role) {
      case Role::conv_pre:
        conv_pre_ = build_conv1d(d, state, precision);
        break;
      case Role::ups:
        ups_.push_back(build_conv_transpose1d(d, state, precision));
        break;
      case Role::convs1:
        blocks_[d.block].convs1.push_back(build_conv1d(d, state, precision));
        break;
      case Role::convs2:
        blocks_[d.block].convs2.push_back(build_conv1d(d, state, precision));
        break;
      case Role::acts1:
        blocks_[d.block].acts1.push_back(build_activation(d, state));
        break;
      case Role::acts2:
        blocks_[d.block].acts2.push_back(build_activation(d, state));
        break;
      case Role::act_post:
        act_post_ = build_activation(d, state);
        break;
      case Role::conv_post:
        conv_post_ = build_conv1d(d, state, precision);
        break;
      default:
        MESHNN_CHECK(false, "generator: unexpected layer '", d.key, "'");
    }
  }
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
  if (cfg_.block == GeneratorConfig::Block::hifigan1)
    ops::leaky_relu_(x, cfg_.post_lrelu_slope);
  else
    x = activation_sharded(*act_post_, x, ts, real);
  x = conv1d_sharded(*conv_post_, x, ts, real);
  if (cfg_.apply_final_activation) {
    if (cfg_.use_tanh_at_final)
      ops::tanh_(x);
    else
      ops::clamp_(x, -1.f, 1.f);
  }
  return x;
}

int64_t Generator::context_frames() const {
  return generator_receptive_field(cfg_).each_side();  // from the layer table
}

double Generator::flops(int64_t frames) const {
  return models::flops(describe_generator(cfg_, ""), frames);
}

}  // namespace meshnn::models
