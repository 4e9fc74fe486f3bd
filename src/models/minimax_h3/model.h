// MiniMax-H3 audio VAE (diffusers `AutoencoderKLMiniMaxH3Audio`), both directions, each written
// once as a graph of layer nodes (graph/graph.h); the one-shot calls run that graph whole
// (Node::run), a stream pushes rows through the same graph.
//
//   decode: latents (B, C, T) → dec_in_proj (k1) → BigVGAN-v2 generator (common/generator.h, keys
//           under "decoder.") → clamp → (B, 1, hop·T). No trim; latents_mean/std never applied.
//   encode: wave (B, 1, L) → zero right-pad to hop·⌈L/hop⌉ (never a crop) → DAC encoder → causal
//           attention projection (attention.h) → mean_proj / logs_proj → (B, C, ⌈L/hop⌉) each.
// Batch items never interact (stereo = two items), so a mesh can give each item its own devices
// (mesh.h); time shards run the same graph with Node::run(x, ts, real): halos from the
// neighbours for every conv, the causal attention gathering the keys and values of its whole past.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/conv.h"
#include "meshnn/layers/time_shard.h"
#include "models/common/generator.h"
#include "models/minimax_h3/config.h"
#include "models/minimax_h3/weights.h"

namespace meshnn::models::minimax_h3 {

// The two files of a diffusers component folder.
constexpr const char* kConfigFile = "config.json";
constexpr const char* kWeightsFile = "diffusion_pytorch_model.safetensors";
// True when `folder/config.json` exists and names this model.
bool is_minimax_h3_folder(const std::string& folder);

class Model {
 public:
  // state: every tensor of the file (checked all at once against cfg: WeightError listing every
  // problem); only the `parts` asked for are built (weight norm folded here).
  Model(const Config& cfg, const std::map<std::string, Tensor>& state, Precision precision,
        Parts parts = Parts::both);
  // A diffusers folder: config.json + diffusion_pytorch_model.safetensors.
  static std::unique_ptr<Model> load(const std::string& folder, Precision precision,
                                     Parts parts = Parts::both);

  const Config& config() const { return cfg_; }
  int64_t hop() const { return cfg_.hop(); }
  bool has_decoder() const { return has(parts_, Parts::decoder); }
  bool has_encoder() const { return has(parts_, Parts::encoder); }

  // latents: (B, C, T) f32, denormalised, T ≥ 1 → (B, 1, hop·T) in [-1, 1].
  Tensor decode(const Tensor& latents);
  struct Posterior {
    Tensor mean;  // (B, C, T): the mode
    Tensor logs;  // (B, C, T): log standard deviation
  };
  // wave: (B, 1, L) f32, L ≥ 1 → posterior with T = ⌈L / hop⌉.
  Posterior encode(const Tensor& wave);

  // The same calls on one device of a time line, through `graph` (this caller's own, from
  // decode_stream() / encode_stream(); the model is not touched, so calls may run at once). Every
  // device of the line passes the same whole input and gets the whole output; each computes its
  // time shard of every layer (ts: this device's split; a default TimeShard = one device).
  // latents: (B, C, T) → (B, 1, hop·T).
  Tensor decode(const Tensor& latents, graph::Node& graph, const TimeShard& ts) const;
  // wave: (B, 1, L) → posterior (B, C, ⌈L / hop⌉) each. Device i holds samples [i·S·hop,
  // (i+1)·S·hop) with S = ⌈T / parts⌉ latents (zeros past L), so every stride divides its shard.
  Posterior encode(const Tensor& wave, graph::Node& graph, const TimeShard& ts) const;
  // The inputs' checks of decode / encode (ShapeError for the shape, an Error naming the first
  // non-finite value), for a caller that splits the input before the call.
  void check_latents(const Tensor& latents) const;
  void check_wave(const Tensor& wave) const;
  // Latent frames per device a time split needs: every layer's halo fits in one neighbour's shard
  // (the one-shot graph's min_shard_rows(), from its layers' reaches).
  int64_t min_decode_frames_per_device() const;
  int64_t min_encode_frames_per_device() const;

  // Fresh streaming graphs over these weights (their own plans and history).
  // Decode: latent rows (B, n, C) → final samples (B, m, 1).
  graph::NodePtr decode_stream() const;
  // Encode: sample rows (B, n, 1) → final latent rows (B, m, 2C) = [mean | logs].
  graph::NodePtr encode_stream() const;

  // Per-channel normalisation of the pipeline: z·std + mean (denormalise) / (z − mean)/std.
  // latents: (B, C, T) f32; InvalidArgument when the config carries no statistics.
  Tensor denormalize(const Tensor& z) const;
  Tensor normalize(const Tensor& z) const;

 private:
  struct EncoderStage {
    std::vector<layers::SnakeParams> snakes;  // per unit: 2; then the block's own
    std::vector<Conv1d> convs;                // per unit: k7, k1; then the strided conv
  };
  Config cfg_;
  Parts parts_;
  Precision precision_;
  // decoder
  std::optional<Conv1d> dec_in_proj_;
  std::unique_ptr<Generator> gen_;
  // encoder
  std::optional<Conv1d> conv_in_, conv_out_, heads_;  // heads_: mean_proj ‖ logs_proj (2C, C, 1)
  std::vector<EncoderStage> stages_;
  layers::SnakeParams snake_out_;
  std::unique_ptr<graph::Node> pre_block_;
  // The one-shot graphs (built once).
  graph::NodePtr decode_graph_, encode_graph_;
};

}  // namespace meshnn::models::minimax_h3
