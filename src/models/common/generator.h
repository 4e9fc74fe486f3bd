// BigVGAN / HiFi-GAN generator (NVIDIA BigVGAN v1/v2, the LTX-2.3 main and BWE vocoders, the
// LTX-2 HiFi-GAN vocoder): conv_pre → [ups[i] → mean of resblocks] × N → post → conv_post.
// One class; the config decides the block type, activation, final op and key style.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/activation.h"
#include "meshnn/layers/conv.h"
#include "meshnn/layers/time_shard.h"
#include "models/common/audio_config.h"

namespace meshnn::models {

class Generator {
 public:
  // Loads every weight under `prefix` (e.g. "vocoder.vocoder."); WeightError naming the key when
  // one is missing or misshaped. `name` is used in messages and progress.
  Generator(const GeneratorConfig& cfg, const std::map<std::string, Tensor>& state,
            const std::string& prefix, Precision precision);
  ~Generator();
  // A copy shares the weights and owns fresh plans: one copy per device thread (see conv.h).
  Generator(const Generator&);
  Generator(Generator&&) noexcept;

  const GeneratorConfig& config() const { return cfg_; }

  // x: this device's (B, S, C_in) time shard of a sequence with `real` real frames (S = real on
  // 1×1) → (B, hop·S, C_out) shard of the waveform (real length hop·real).
  Tensor forward(const Tensor& x, const TimeShard& ts, int64_t real);
  // Unsharded convenience. x: (B, T, C_in) → (B, hop·T, C_out).
  Tensor forward(const Tensor& x) { return forward(x, TimeShard(), x.dim(1)); }

  // The generator's graph (its one wiring) over copies of these layers: input rows (B, n, C_in) →
  // output samples (B, hop·n, C_out), to run one shot or streamed (graph/graph.h).
  graph::NodePtr graph() const;
  // Input frames a device's time shard needs at least: the graph's min_shard_rows().
  int64_t min_shard_rows() const { return graph_->min_shard_rows(); }
  // The graph's reach in input frames (chunk windows: runtime/chunked.h).
  graph::Reach reach() const { return graph_->reach(); }

  // Multiply-add count of one forward over `frames` input frames (for GFLOP/s reports).
  double flops(int64_t frames) const;

 private:
  // One residual block: AMPBlock1 (pairs of activation → dilated conv → activation → conv),
  // AMPBlock2 (activation → dilated conv) or HiFi-GAN ResBlock1 (leaky ReLU, no activations).
  struct Block {
    GeneratorConfig::Block type;
    float slope = 0.1f;
    std::vector<Conv1d> convs1, convs2;
    std::vector<layers::AntiAliasedActivation> acts1, acts2;
  };
  GeneratorConfig cfg_;
  std::optional<Conv1d> conv_pre_;
  std::vector<ConvTranspose1d> ups_;
  std::vector<Block> blocks_;  // stage i, kernel j at i·R + j
  std::optional<layers::AntiAliasedActivation> act_post_;
  std::optional<Conv1d> conv_post_;
  graph::NodePtr graph_;  // forward()'s run of graph()
};

}  // namespace meshnn::models
