// The toy audio VAE (config.h): a latent decoder and a wave encoder, each written once as a graph
// of the runtime's layer nodes (graph/graph.h), as every model in src/models is; the one-shot,
// time-sharded and streamed runs all go through that graph.
//
//   decode: latents (B, C, T) → rows (B, T, C) → k3 conv → ×hop transposed conv → anti-aliased
//           SnakeBeta → k3 conv → (B, 1, hop·T).
//   encode: wave (B, 1, L) → zero right-pad to hop·⌈L/hop⌉ → k3 conv → strided conv (k = 2·hop,
//           stride hop, pad hop/2) → k1 heads → [mean | logs] (B, 2C, ⌈L/hop⌉).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "graph/graph.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/activation.h"
#include "meshnn/layers/conv.h"
#include "meshnn/layers/time_shard.h"
#include "support/toy_model/config.h"

namespace meshnn::test::toy {

class Model {
 public:
  // state: every tensor of the checkpoint (checked all at once, WeightError naming `where`).
  Model(const Config& cfg, const std::map<std::string, Tensor>& state, Precision precision,
        const std::string& where);
  // A toy folder: config.json + toy_vae.safetensors.
  static std::shared_ptr<const Model> load(const std::string& folder, Precision precision);
  // True when folder/config.json exists and names the toy class.
  static bool is_folder(const std::string& path);

  const Config& config() const { return cfg_; }
  int64_t hop() const { return cfg_.hop; }

  // Fresh graphs over these weights (their own plans and history).
  // Decode: latent rows (B, n, C) → samples (B, hop·n, 1).
  graph::NodePtr decode_graph() const;
  // Encode: sample rows (B, n, 1) → latent rows (B, ⌈n/hop⌉, 2C) = [mean | logs].
  graph::NodePtr encode_graph() const;

  // One device of a time line (ts; default: one device), graph from decode_graph().
  // latents: (B, C, T ≥ 1) → (B, 1, hop·T).
  Tensor decode(const Tensor& latents, graph::Node& g, const TimeShard& ts) const;
  // Graph from encode_graph(). wave: (B, 1, L ≥ 1) → (B, 2C, ⌈L/hop⌉) = [mean ; logs]. A device
  // holds whole hops of samples (zeros past L).
  Tensor encode(const Tensor& wave, graph::Node& g, const TimeShard& ts) const;
  // Input checks (ShapeError / a non-finite value named).
  void check_latents(const Tensor& latents) const;
  void check_wave(const Tensor& wave) const;
  // Latent frames per device of a time split, from the graphs' min_shard_rows().
  int64_t min_decode_frames() const;
  int64_t min_encode_frames() const;

 private:
  Config cfg_;
  Conv1d dec_pre_, dec_post_, enc_pre_, enc_down_, enc_heads_;
  ConvTranspose1d dec_up_;
  layers::AntiAliasedActivation dec_act_;
};

}  // namespace meshnn::test::toy
