// One description per GR00T model: the table of its layers, each with its checkpoint key, its
// shape as a function of the config and the layer that owns it. This is the only C++ file pair
// that spells GR00T checkpoint keys (the layers add their tensor names under a key: nn.Linear,
// LayerNorm and Embedding `weight` / `bias`, CategorySpecificLinear `W` / `b`, see
// meshnn/layers/state_dict.h). Built from the description:
//   - loading (VlAdapter and ActionHead take each layer's keys by name from the weights structs),
//   - the checkpoint check (every missing, misshaped or non-float tensor reported at once),
//   - seeded random checkpoints (make_random_checkpoint, make_random_head_checkpoint),
//   - multiply-add counts (flops()).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "meshnn/gr00t_config.h"
#include "meshnn/layers/state_dict.h"

namespace meshnn::gr00t {

struct LayerDesc {
  enum class Kind {
    linear,           // nn.Linear: weight (out, in), bias (out)
    layer_norm,       // nn.LayerNorm: weight (out), bias (out)
    category_linear,  // CategorySpecificLinear: W (categories, in, out), b (categories, out)
    embedding,        // nn.Embedding / nn.Parameter table: weight (in rows, out)
  };
  LayerDesc() = default;
  LayerDesc(Kind k, std::string key_, int64_t in_, int64_t out_, int block_ = -1,
            int64_t categories_ = 0)
      : kind(k), key(std::move(key_)), in(in_), out(out_), block(block_), categories(categories_) {}
  Kind kind = Kind::linear;
  std::string key;  // checkpoint prefix of the layer (no trailing '.')
  int64_t in = 0, out = 0;
  int block = -1;          // VL-SA or DiT block index; -1 elsewhere
  int64_t categories = 0;  // category_linear: embodiments

  std::string weight_key() const;  // weight | W
  std::string bias_key() const;    // bias | b
  // Every tensor of the layer in checkpoint order (weight, then bias), with its shape.
  std::vector<std::pair<std::string, Shape>> tensors() const;
};

using ModelDesc = std::vector<LayerDesc>;

// The weights of each GR00T model as a struct of named layers (gemma.cpp's ForEachTensor shape):
// the loaders take each layer by name, and for_each_layer(f) walks every one in table order (the
// order random checkpoints draw them), from which the flat ModelDesc — and with it the checkpoint
// check, random init and FLOP counts — derives. F: void(const LayerDesc&).

// One DiT block (nn.Linear layers; its two LayerNorms have no parameters). Cross blocks read
// their K / V from the VL features (cross_attention_dim wide), self blocks from the block's own
// rows.
struct DitBlockWeights {
  LayerDesc ada;  // norm1.linear: the AdaLN scale / shift projection
  LayerDesc q, k, v, out, ff1, ff2;
  template <class F>
  void for_each_layer(F&& f) const {
    for (const LayerDesc* l : {&ada, &q, &k, &v, &out, &ff1, &ff2}) f(*l);
  }
};

// The VL adapter: vlln, VL self-attention (N1.5 / N1.7), the cross blocks' K / V projections the
// adapter hoists, and the state encoder.
struct AdapterWeights {
  struct VlsaBlock {
    LayerDesc norm1, q, k, v, out, norm3, ff1, ff2;
  };
  struct CrossKv {  // DiT block `k.block`'s K / V projections
    LayerDesc k, v;
  };
  LayerDesc vlln;
  std::vector<VlsaBlock> vlsa;
  std::vector<CrossKv> cross_kv;
  LayerDesc state_layer1, state_layer2;  // CategorySpecificLinear
  template <class F>
  void for_each_layer(F&& f) const {
    f(vlln);
    for (const VlsaBlock& b : vlsa)
      for (const LayerDesc* l : {&b.norm1, &b.q, &b.k, &b.v, &b.out, &b.norm3, &b.ff1, &b.ff2})
        f(*l);
    for (const CrossKv& c : cross_kv) {
      f(c.k);
      f(c.v);
    }
    f(state_layer1);
    f(state_layer2);
  }
};

// The action head after the adapter: timestep encoder, every DiT block (the cross blocks' K / V
// included: a head checkpoint must carry them; the adapter reads them), output projections,
// action encoder / decoder, position embedding, future tokens (N1.5).
struct ActionHeadWeights {
  LayerDesc timestep_linear1, timestep_linear2;
  std::vector<DitBlockWeights> blocks;
  LayerDesc proj_out_1, proj_out_2;
  LayerDesc encoder_w1, encoder_w2, encoder_w3;  // CategorySpecificLinear
  LayerDesc decoder_layer1, decoder_layer2;      // CategorySpecificLinear
  LayerDesc position_embedding;
  bool has_future_tokens = false;  // N1.5
  LayerDesc future_tokens;
  template <class F>
  void for_each_layer(F&& f) const {
    f(timestep_linear1);
    f(timestep_linear2);
    for (const DitBlockWeights& b : blocks) b.for_each_layer(f);
    for (const LayerDesc* l : {&proj_out_1, &proj_out_2, &encoder_w1, &encoder_w2, &encoder_w3,
                               &decoder_layer1, &decoder_layer2, &position_embedding})
      f(*l);
    if (has_future_tokens) f(future_tokens);
  }
};

AdapterWeights adapter_weights(const Config& cfg, const std::string& prefix);
ActionHeadWeights action_head_weights(const Config& cfg, const ActionHeadConfig& hc,
                                      const std::string& prefix);

// The flat tables: every layer of the weights in for_each_layer order.
template <class W>
ModelDesc flatten(const W& w) {
  ModelDesc out;
  w.for_each_layer([&](const LayerDesc& l) { out.push_back(l); });
  return out;
}
ModelDesc describe_adapter(const Config& cfg, const std::string& prefix);
ModelDesc describe_action_head(const Config& cfg, const ActionHeadConfig& hc,
                               const std::string& prefix);

// Every tensor of the description in table order, each key once.
std::vector<std::pair<std::string, Shape>> tensor_shapes(const ModelDesc& desc);

// Checks every tensor of `desc` in `weights` before any is read: missing, misshaped and non-float
// tensors, all listed in one WeightError (the first 25 of each kind). `what` names the model.
void require_weights(const ModelDesc& desc, const WeightLookup& weights, const std::string& what);

// Seeded random tensors for every entry of `desc` in table order (uniform u in [−1, 1)):
// LayerNorm γ = 1 + 0.1·u, β = 0.1·u; weights and W u / √(dim 1) (fan in); biases and b 0.02·u;
// embeddings u / √D. `uniform` draws u (the caller owns the generator).
std::map<std::string, Tensor> random_tensors(const ModelDesc& desc,
                                             const std::function<float()>& uniform);

// Multiply-adds × 2 of the layers in `desc` when layer L runs on rows(L) rows (category layers:
// one embodiment's slice; embeddings cost nothing).
double flops(const ModelDesc& desc, const std::function<int64_t(const LayerDesc&)>& rows);
// One adapter forward under `plan` on one device: VL-SA on the active slots, each cross block's
// K / V hoist on its key set's L_pad rows, the state encoder on one row.
double adapter_flops(const AdapterPlan& plan);

}  // namespace meshnn::gr00t
