#include "models/common/generator.h"

#include <algorithm>

#include "graph/graph.h"
#include "meshnn/core/profile.h"
#include "models/common/audio_description.h"
#include "ops/elementwise.h"

namespace meshnn::models {

Generator::Generator(const GeneratorConfig& cfg, const std::map<std::string, Tensor>& state,
                     const std::string& prefix, Precision precision)
    : cfg_(cfg) {
  cfg_.validate(prefix);
  blocks_.resize(cfg_.num_stages() * cfg_.resblock_kernel_sizes.size());
  for (Block& b : blocks_) {
    b.type = cfg_.block;
    b.slope = cfg_.lrelu_slope;
  }
  // The layers come from the model's weights description, by name.
  const GeneratorWeights w = generator_weights(cfg_, prefix);
  conv_pre_ = build_conv1d(w.conv_pre, state, precision);
  for (const GeneratorWeights::Stage& st : w.stages) {
    ups_.push_back(build_conv_transpose1d(st.up, state, precision));
    for (const GeneratorWeights::Block& bw : st.blocks) {
      Block& b = blocks_[bw.convs1.front().block];
      for (const LayerDesc& d : bw.convs1) b.convs1.push_back(build_conv1d(d, state, precision));
      for (const LayerDesc& d : bw.convs2) b.convs2.push_back(build_conv1d(d, state, precision));
      for (const LayerDesc& d : bw.acts1) b.acts1.push_back(build_activation(d, state));
      for (const LayerDesc& d : bw.acts2) b.acts2.push_back(build_activation(d, state));
    }
  }
  if (w.has_act_post) act_post_ = build_activation(w.act_post, state);
  conv_post_ = build_conv1d(w.conv_post, state, precision);
  graph_ = graph();
}

Generator::~Generator() = default;
Generator::Generator(const Generator& o)
    : cfg_(o.cfg_),
      conv_pre_(o.conv_pre_),
      ups_(o.ups_),
      blocks_(o.blocks_),
      act_post_(o.act_post_),
      conv_post_(o.conv_post_),
      graph_(o.graph_->fork()) {}
Generator::Generator(Generator&&) noexcept = default;

Tensor Generator::forward(const Tensor& x, const TimeShard& ts, int64_t real) {
  MESHNN_CHECK_AS(ShapeError, x.rank() == 3 && x.dim(2) == cfg_.in_channels,
                  "generator: expected input (B, T, ", cfg_.in_channels, "), got ",
                  shape_str(x.shape()));
  return graph_->run(x, ts, real);
}

// The model's one wiring: each residual unit is a fork of the identity and its branch joined by an
// add (x + t), each stage a fork of its blocks joined by their mean (((a + b) + c) / 3, not the
// sum).
graph::NodePtr Generator::graph() const {
  using namespace graph;
  const bool hifi = cfg_.block == GeneratorConfig::Block::hifigan1;
  auto leaky = [](float slope) {
    return map_rows("leaky_relu", 1, [slope](const Tensor& x) {
      Tensor t = x.clone();
      ops::leaky_relu_(t, slope);
      return t;
    });
  };
  auto residual = [](NodePtr branch) {
    std::vector<NodePtr> b;
    b.push_back(identity());
    b.push_back(std::move(branch));
    return fork_join("residual_add", std::move(b), [](std::vector<Tensor>& p) {
      ops::add_(p[1], p[0]);  // t + x == x + t
      return p[1];
    });
  };
  auto block_graph = [&](const Block& blk) {
    std::vector<NodePtr> units;
    for (size_t j = 0; j < blk.convs1.size(); ++j) {
      std::vector<NodePtr> br;
      br.push_back(hifi ? leaky(blk.slope) : activation_node(blk.acts1[j]));
      br.push_back(conv_node(blk.convs1[j]));
      if (blk.type != GeneratorConfig::Block::amp2) {
        br.push_back(hifi ? leaky(blk.slope) : activation_node(blk.acts2[j]));
        br.push_back(conv_node(blk.convs2[j]));
      }
      units.push_back(residual(sequence(std::move(br))));
    }
    return sequence(std::move(units));
  };
  std::vector<NodePtr> ops_seq;
  ops_seq.push_back(conv_node(*conv_pre_));
  const int n_k = static_cast<int>(cfg_.resblock_kernel_sizes.size());
  for (int i = 0; i < cfg_.num_stages(); ++i) {
    if (hifi) ops_seq.push_back(leaky(cfg_.lrelu_slope));
    ops_seq.push_back(conv_transpose_node(ups_[i]));
    std::vector<NodePtr> blocks;
    for (int j = 0; j < n_k; ++j) blocks.push_back(block_graph(blocks_[i * n_k + j]));
    ops_seq.push_back(mean_join("stage_mean", std::move(blocks)));
  }
  if (hifi)
    ops_seq.push_back(leaky(cfg_.post_lrelu_slope));
  else
    ops_seq.push_back(activation_node(*act_post_));
  ops_seq.push_back(conv_node(*conv_post_));
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
