#include "models/gr00t/description.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "meshnn/core/error.h"
#include "models/common/checkpoint_check.h"

namespace meshnn::gr00t {

using Kind = LayerDesc::Kind;

std::string LayerDesc::weight_key() const {
  return kind == Kind::category_linear ? category_weight_key(key) : meshnn::weight_key(key);
}

std::string LayerDesc::bias_key() const {
  return kind == Kind::category_linear ? category_bias_key(key) : meshnn::bias_key(key);
}

std::vector<std::pair<std::string, Shape>> LayerDesc::tensors() const {
  switch (kind) {
    case Kind::linear:
      return {{weight_key(), {out, in}}, {bias_key(), {out}}};
    case Kind::layer_norm:
      return {{weight_key(), {out}}, {bias_key(), {out}}};
    case Kind::category_linear:
      return {{weight_key(), {categories, in, out}}, {bias_key(), {categories, out}}};
    case Kind::embedding:
      return {{weight_key(), {in, out}}};
  }
  return {};
}

std::string default_weight_prefix() { return "action_head."; }

namespace {

DitBlockWeights dit_block(const Config& c, const std::string& prefix, int i) {
  const int64_t D = c.dit.inner_dim();
  const std::vector<int> cross = c.dit.cross_block_indices();
  const bool is_cross = std::find(cross.begin(), cross.end(), i) != cross.end();
  const int64_t kv_in = is_cross ? c.dit.cross_attention_dim : D;
  const std::string p = prefix + "model.transformer_blocks." + std::to_string(i) + ".";
  DitBlockWeights b;
  b.ada = {Kind::linear, p + "norm1.linear", D, 2 * D, i};
  b.q = {Kind::linear, p + "attn1.to_q", D, D, i};
  b.k = {Kind::linear, p + "attn1.to_k", kv_in, D, i};
  b.v = {Kind::linear, p + "attn1.to_v", kv_in, D, i};
  b.out = {Kind::linear, p + "attn1.to_out.0", D, D, i};
  b.ff1 = {Kind::linear, p + "ff.net.0.proj", D, 4 * D, i};
  b.ff2 = {Kind::linear, p + "ff.net.2", 4 * D, D, i};
  return b;
}

}  // namespace

AdapterWeights adapter_weights(const Config& c, const std::string& prefix) {
  const int64_t D = c.vl.dim, F = c.vl.ff_dim;
  AdapterWeights w;
  w.vlln = {Kind::layer_norm, prefix + "vlln", D, D};
  for (int i = 0; i < c.vl.n_blocks; ++i) {
    const std::string p =
        prefix + "vl_self_attention.transformer_blocks." + std::to_string(i) + ".";
    AdapterWeights::VlsaBlock& b = w.vlsa.emplace_back();
    b.norm1 = {Kind::layer_norm, p + "norm1", D, D, i};
    b.q = {Kind::linear, p + "attn1.to_q", D, D, i};
    b.k = {Kind::linear, p + "attn1.to_k", D, D, i};
    b.v = {Kind::linear, p + "attn1.to_v", D, D, i};
    b.out = {Kind::linear, p + "attn1.to_out.0", D, D, i};
    b.norm3 = {Kind::layer_norm, p + "norm3", D, D, i};
    b.ff1 = {Kind::linear, p + "ff.net.0.proj", D, F, i};
    b.ff2 = {Kind::linear, p + "ff.net.2", F, D, i};
  }
  // The adapter hoists the cross blocks' K / V projections of the VL features.
  for (int i : c.dit.cross_block_indices()) {
    const DitBlockWeights b = dit_block(c, prefix, i);
    w.cross_kv.push_back({b.k, b.v});
  }
  const int64_t E = c.state.num_embodiments, H = c.state.hidden_size;
  w.state_layer1 = {
      Kind::category_linear, prefix + "state_encoder.layer1", c.state.max_state_dim, H, -1, E};
  w.state_layer2 = {Kind::category_linear,
                    prefix + "state_encoder.layer2",
                    H,
                    c.state.input_embedding_dim,
                    -1,
                    E};
  return w;
}

ActionHeadWeights action_head_weights(const Config& c, const ActionHeadConfig& hc,
                                      const std::string& prefix) {
  const int64_t D = c.dit.inner_dim();
  const int64_t O = c.state.hidden_size, A = hc.action_dim, E = c.state.num_embodiments;
  const std::string m = prefix + "model.", te = m + "timestep_encoder.timestep_embedder.";
  ActionHeadWeights w;
  // The timestep embedder reads a 256-wide sinusoid.
  w.timestep_linear1 = {Kind::linear, te + "linear_1", 256, D};
  w.timestep_linear2 = {Kind::linear, te + "linear_2", D, D};
  for (int i = 0; i < c.dit.n_layers; ++i) w.blocks.push_back(dit_block(c, prefix, i));
  w.proj_out_1 = {Kind::linear, m + "proj_out_1", D, 2 * D};
  w.proj_out_2 = {Kind::linear, m + "proj_out_2", D, O};
  const std::string a = prefix + "action_encoder.";
  w.encoder_w1 = {Kind::category_linear, a + "W1", A, D, -1, E};
  w.encoder_w2 = {Kind::category_linear, a + "W2", 2 * D, D, -1, E};
  w.encoder_w3 = {Kind::category_linear, a + "W3", D, D, -1, E};
  const std::string d = prefix + "action_decoder.";
  w.decoder_layer1 = {Kind::category_linear, d + "layer1", O, O, -1, E};
  w.decoder_layer2 = {Kind::category_linear, d + "layer2", O, A, -1, E};
  w.position_embedding = {Kind::embedding, prefix + "position_embedding", hc.max_seq_len, D};
  w.has_future_tokens = hc.future_tokens > 0;
  if (w.has_future_tokens)
    w.future_tokens = {Kind::embedding, prefix + "future_tokens", hc.future_tokens, D};
  return w;
}

ModelDesc describe_adapter(const Config& c, const std::string& prefix) {
  return flatten(adapter_weights(c, prefix));
}

ModelDesc describe_action_head(const Config& c, const ActionHeadConfig& hc,
                               const std::string& prefix) {
  return flatten(action_head_weights(c, hc, prefix));
}

std::vector<std::pair<std::string, Shape>> tensor_shapes(const ModelDesc& desc) {
  std::vector<std::pair<std::string, Shape>> out;
  std::set<std::string> seen;
  for (const LayerDesc& l : desc)
    for (auto& [k, s] : l.tensors())
      if (seen.insert(k).second) out.emplace_back(k, s);
  return out;
}

void require_weights(const ModelDesc& desc, const WeightLookup& weights, const std::string& what) {
  std::vector<std::string> missing, wrong_shape, wrong_dtype;
  for (const auto& [key, shape] : tensor_shapes(desc)) {
    const std::optional<Tensor> t = weights(key);
    if (!t) {
      missing.push_back("'" + key + "' " + shape_str(shape));
    } else if (t->shape() != shape) {
      wrong_shape.push_back("'" + key + "' has shape " + shape_str(t->shape()) + ", expected " +
                            shape_str(shape));
    } else if (t->dtype() != DType::f32 && t->dtype() != DType::bf16 && t->dtype() != DType::f16 &&
               t->dtype() != DType::f64) {
      wrong_dtype.push_back("'" + key + "' has dtype " + dtype_name(t->dtype()));
    }
  }
  const size_t n = missing.size() + wrong_shape.size() + wrong_dtype.size();
  if (n == 0) return;
  std::string msg = detail::concat(what, ": ", n, " checkpoint tensor problem(s):");
  models::append_problem_list(msg, "missing", missing);
  models::append_problem_list(msg, "with the wrong shape", wrong_shape);
  models::append_problem_list(msg, "not a float type (f32 | bf16 | f16 | f64)", wrong_dtype);
  throw WeightError(msg);
}

std::map<std::string, Tensor> random_tensors(const ModelDesc& desc,
                                             const std::function<float()>& uniform) {
  std::map<std::string, Tensor> out;
  for (const LayerDesc& l : desc) {
    for (const auto& [key, shape] : l.tensors()) {
      if (out.count(key)) continue;
      const bool is_bias = key == l.bias_key();
      float scale = 0.02f, offset = 0.f;
      if (l.kind == Kind::layer_norm) {
        scale = 0.1f;
        offset = is_bias ? 0.f : 1.f;  // γ ≈ 1, β ≈ 0
      } else if (!is_bias) {
        // nn.Linear (out, in), CategorySpecificLinear (E, in, out) and the embeddings: dim 1
        scale = 1.f / std::sqrt(static_cast<float>(shape[1]));
      }
      Tensor t = Tensor::empty(shape);
      float* d = t.data<float>();
      for (int64_t i = 0; i < t.numel(); ++i) d[i] = offset + scale * uniform();
      out[key] = t;
    }
  }
  return out;
}

double flops(const ModelDesc& desc, const std::function<int64_t(const LayerDesc&)>& rows) {
  double f = 0;
  for (const LayerDesc& l : desc)
    if (l.kind == Kind::linear || l.kind == Kind::category_linear)
      f += 2.0 * static_cast<double>(l.in) * static_cast<double>(l.out) *
           static_cast<double>(rows(l));
  return f;
}

double adapter_flops(const AdapterPlan& plan) {
  const AdapterWeights w = adapter_weights(plan.config, plan.weight_prefix);
  // Rows per layer: VL-SA on the active slots, each cross block's K / V hoist on its key set's
  // L_pad rows, the state encoder on one row.
  std::map<const LayerDesc*, int64_t> rows;
  for (const AdapterWeights::CrossKv& c : w.cross_kv)
    for (const HoistBlockPlan& b : plan.blocks)
      if (b.block == c.k.block) {
        rows[&c.k] = rows[&c.v] = b.l_pad;
        break;
      }
  rows[&w.state_layer1] = rows[&w.state_layer2] = 1;
  double f = 0;
  w.for_each_layer([&](const LayerDesc& l) {
    auto it = rows.find(&l);
    const int64_t n = it == rows.end() ? plan.s_active : it->second;
    f += flops({l}, [n](const LayerDesc&) { return n; });
  });
  return f;
}

// ------------------------------------------------------------------------------------------------
// the weight prefix and random checkpoints (declared in the public GR00T headers)
// ------------------------------------------------------------------------------------------------

std::string detect_weight_prefix(const std::vector<std::string>& keys) {
  // Any prefix ending in the default one (LeRobot copies add "_groot_model." etc.).
  const std::string head = default_weight_prefix();
  const std::string tail = meshnn::weight_key(head + "vlln");
  for (const std::string& k : keys)
    if (k.size() >= tail.size() && k.compare(k.size() - tail.size(), tail.size(), tail) == 0)
      return k.substr(0, k.size() - tail.size() + head.size());
  std::string some;
  for (size_t i = 0; i < keys.size() && i < 5; ++i) some += (i ? ", " : "") + keys[i];
  throw WeightError(
      "checkpoint has no '" + tail +
      "' key (not a GR00T action head?); first keys: " + (some.empty() ? "<none>" : some));
}

std::map<std::string, Tensor> make_random_checkpoint(const Config& cfg, uint64_t seed,
                                                     const std::string& prefix) {
  cfg.validate();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  return random_tensors(describe_adapter(cfg, prefix), [&] { return u(rng); });
}

std::map<std::string, Tensor> make_random_head_checkpoint(const Config& cfg,
                                                          const ActionHeadConfig& hc, uint64_t seed,
                                                          const std::string& prefix) {
  std::map<std::string, Tensor> w = make_random_checkpoint(cfg, seed, prefix);
  std::mt19937_64 rng(seed + 1);
  // Not std::uniform_real_distribution: the same values on every standard library.
  auto u = [&rng] {
    return static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0);
  };
  ModelDesc rest;
  for (const LayerDesc& l : describe_action_head(cfg, hc, prefix))
    if (!w.count(l.weight_key())) rest.push_back(l);  // not the adapter's cross K / V
  w.merge(random_tensors(rest, u));
  return w;
}

}  // namespace meshnn::gr00t
