#include "models/generator.h"

#include <algorithm>

#include "meshnn/core/profile.h"
#include "models/audio_description.h"
#include "ops/elementwise.h"
#include "streaming/stream_ops.h"

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

// The same graph as forward(), as streaming operators: each residual unit is a fork of the
// identity and its branch joined by an add, each stage a fork of its blocks joined by the mean,
// with the arithmetic of forward() (x + t, ((a + b) + c) / 3) so rows agree bit for bit where the
// layers' kernels do.
std::unique_ptr<streaming::StreamOp> Generator::stream(streaming::StreamLayout layout) const {
  using namespace streaming;
  const bool hifi = cfg_.block == GeneratorConfig::Block::hifigan1;
  auto leaky = [](float slope) {
    return map_rows("leaky_relu", 1, [slope](const Tensor& x) {
      Tensor t = x.clone();
      ops::leaky_relu_(t, slope);
      return t;
    });
  };
  auto residual = [](StreamOpPtr branch) {
    std::vector<StreamOpPtr> b;
    b.push_back(identity());
    b.push_back(std::move(branch));
    return fork_join("residual_add", std::move(b), [](std::vector<Tensor>& p) {
      ops::add_(p[1], p[0]);  // t + x == x + t
      return p[1];
    });
  };
  auto block_stream = [&](const Block& blk) {
    std::vector<StreamOpPtr> units;
    for (size_t j = 0; j < blk.convs1.size(); ++j) {
      std::vector<StreamOpPtr> br;
      br.push_back(hifi ? leaky(blk.slope) : activation_stream(blk.acts1[j]));
      br.push_back(conv_stream(blk.convs1[j]));
      if (blk.type != GeneratorConfig::Block::amp2) {
        br.push_back(hifi ? leaky(blk.slope) : activation_stream(blk.acts2[j]));
        br.push_back(conv_stream(blk.convs2[j]));
      }
      units.push_back(residual(sequence(std::move(br))));
    }
    return sequence(std::move(units));
  };
  auto divide = [](Tensor& x, int n) {
    float* q = x.data<float>();
    for (int64_t e = 0; e < x.numel(); ++e) q[e] /= static_cast<float>(n);
  };
  std::vector<StreamOpPtr> ops_seq;
  ops_seq.push_back(conv_stream(*conv_pre_));
  const int n_k = static_cast<int>(cfg_.resblock_kernel_sizes.size());
  for (int i = 0; i < cfg_.num_stages(); ++i) {
    if (hifi) ops_seq.push_back(leaky(cfg_.lrelu_slope));
    ops_seq.push_back(conv_transpose_stream(ups_[i]));
    if (layout == StreamLayout::lowest_latency) {
      std::vector<StreamOpPtr> blocks;
      for (int j = 0; j < n_k; ++j) blocks.push_back(block_stream(blocks_[i * n_k + j]));
      ops_seq.push_back(
          fork_join("stage_mean", std::move(blocks), [n_k, divide](std::vector<Tensor>& p) {
            if (n_k == 3) {
              ops::mean3(p[0], p[1], p[2], p[0]);
              return p[0];
            }
            Tensor x = p[0].clone();
            for (int j = 1; j < n_k; ++j) ops::add_(x, p[j]);
            divide(x, n_k);
            return x;
          }));
      continue;
    }
    // pipeline_cuts: the rows carry [x | acc] (stage input, running sum) side by side in
    // channels, block j adds its output to acc, the last one divides: acc = ((0 + a) + b) + c,
    // then / n_k, the arithmetic of forward().
    ops_seq.push_back(map_rows("stage_carry", 1, [](const Tensor& x) {
      return concat({x, Tensor(x.shape())}, 2);
    }));
    for (int j = 0; j < n_k; ++j) {
      const bool last = j == n_k - 1;
      std::vector<StreamOpPtr> paths;
      paths.push_back(identity());
      std::vector<StreamOpPtr> branch;
      branch.push_back(map_rows("stage_input", 1,
                                [](const Tensor& xa) { return xa.narrow(2, 0, xa.dim(2) / 2); }));
      branch.push_back(block_stream(blocks_[i * n_k + j]));
      paths.push_back(sequence(std::move(branch)));
      ops_seq.push_back(
          fork_join("stage_mean", std::move(paths), [last, n_k, divide](std::vector<Tensor>& p) {
            const int64_t C = p[0].dim(2) / 2;
            Tensor acc = p[0].narrow(2, C, C);
            ops::add_(acc, p[1]);
            if (!last) return concat({p[0].narrow(2, 0, C), acc}, 2);
            divide(acc, n_k);
            return acc;
          }));
    }
  }
  if (hifi)
    ops_seq.push_back(leaky(cfg_.post_lrelu_slope));
  else
    ops_seq.push_back(activation_stream(*act_post_));
  ops_seq.push_back(conv_stream(*conv_post_));
  if (cfg_.apply_final_activation) {
    const bool use_tanh = cfg_.use_tanh_at_final;
    ops_seq.push_back(map_rows("final_activation", 1, [use_tanh](const Tensor& x) {
      Tensor t = x.clone();
      if (use_tanh)
        ops::tanh_(t);
      else
        ops::clamp_(t, -1.f, 1.f);
      return t;
    }));
  }
  return sequence(std::move(ops_seq));
}

double Generator::flops(int64_t frames) const {
  return models::flops(describe_generator(cfg_, ""), frames);
}

}  // namespace meshnn::models
