// The GR00T AdapterPlan: key sets, cross blocks, head-parallel split, checked before any compute.
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/adapter.h"
#include "models/gr00t/description.h"

namespace meshnn::gr00t {

using nlohmann::json;

namespace {

// Rows covered by a list of slot runs.
int64_t runs_length(const std::vector<Run>& r) {
  int64_t n = 0;
  for (auto& [b, e] : r) n += e - b;
  return n;
}

// The key sets the cross blocks read (N1.5: every slot; N1.6 / N1.7: the text and image runs),
// into p.key_sets (p.s_pad set).
void plan_key_sets(const Config& cfg, const SlotLayout& layout, AdapterPlan& p) {
  const char* vn = version_name(cfg.version);
  if (cfg.dit.key_sets == CrossKeySets::all) {
    KeySetPlan k;
    k.name = "all";
    k.runs = {{0, p.s_pad}};
    std::tie(k.l_real, k.l_pad) = layout.key_set_lengths("all");
    k.identity = true;
    k.mask_present = layout.seq_len() < p.s_pad;  // pad slots must be hidden in the DiT
    p.key_sets["all"] = k;
  } else {
    for (const char* name : {"text", "image"}) {
      KeySetPlan k;
      k.name = name;
      k.runs = std::string(name) == "text" ? layout.text_runs() : layout.image_runs();
      std::tie(k.l_real, k.l_pad) = layout.key_set_lengths(name);
      MESHNN_CHECK(k.l_real > 0, vn, ": the layout has no ", name,
                   " tokens but cross blocks read "
                   "the '",
                   name, "' key set (attention over no keys is undefined)");
      MESHNN_CHECK(runs_length(k.runs) == k.l_real, name, ": runs cover ", runs_length(k.runs),
                   " rows, layout says ", k.l_real);
      MESHNN_CHECK(k.l_pad >= k.l_real && k.l_pad % cfg.row_block == 0, name, ": L_pad=", k.l_pad,
                   " must be a multiple of ", cfg.row_block, " >= L_real=", k.l_real);
      k.identity = false;
      k.mask_present = k.l_pad > k.l_real;
      p.key_sets[name] = k;
    }
  }
}

}  // namespace

AdapterPlan build_adapter_plan(const Config& cfg, const SlotLayout& layout,
                               const AdapterOptions& options, const WeightLookup* weights,
                               const std::string& weight_prefix, int tp, int tp_rank) {
  cfg.validate();
  const char* vn = version_name(cfg.version);
  AdapterPlan p;
  p.config = cfg;
  p.layout = layout;
  p.options = options;
  p.weight_prefix = weight_prefix;
  for (Precision pr : {options.precision, options.hoist_precision, options.state_precision})
    MESHNN_CHECK(pr == Precision::fp32 || pr == Precision::bf16, vn, ": precision ",
                 precision_name(pr), " is not available for the adapter (fp32 | bf16)");
  MESHNN_CHECK(layout.seq_len() > 0, vn, ": the slot layout is empty");
  MESHNN_CHECK(layout.row_block() == cfg.row_block, vn, ": layout row_block ", layout.row_block(),
               " != config row_block ", cfg.row_block);
  p.s_pad = layout.s_pad();
  MESHNN_CHECK(p.s_pad % cfg.row_block == 0, vn, ": S_pad=", p.s_pad, " is not a multiple of ",
               cfg.row_block);
  p.s_active = layout.active_slots();
  p.dim = cfg.vl.dim;
  p.n_vlsa = cfg.vl.n_blocks;
  p.vlsa_scale =
      p.n_vlsa ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(cfg.vl.head_dim))) : 0.f;
  // The seed pads the DiT head dim 48 → 64 for its 32-wide tiles; a CPU has no tiles, so the
  // buffers keep the true head dim (and the softmax scale 1/sqrt(48) has nothing to correct).
  p.n_heads = cfg.dit.n_heads;
  p.head_dim = cfg.dit.head_dim;
  p.kv_width = 2 * p.n_heads * p.head_dim;
  p.vl_mask_present = p.n_vlsa > 0;
  MESHNN_CHECK(tp >= 1 && tp_rank >= 0 && tp_rank < tp, vn, ": bad head-parallel split ", tp_rank,
               " of ", tp);
  MESHNN_CHECK(options.mesh_axis == 0 || options.mesh_axis == 1, vn,
               ": mesh_axis must be 0 or 1, got ", options.mesh_axis);
  p.tp = tp;
  p.tp_rank = tp_rank;
  if (tp > 1) {
    MESHNN_CHECK(cfg.dit.n_heads % tp == 0, vn, ": head-parallel over ", tp,
                 " devices needs diffusion_model_cfg.num_attention_heads (", cfg.dit.n_heads,
                 ") divisible by ", tp);
    MESHNN_CHECK(p.n_vlsa == 0 || cfg.vl.n_heads % tp == 0, vn, ": head-parallel over ", tp,
                 " devices needs vl_self_attention_cfg.num_attention_heads (", cfg.vl.n_heads,
                 ") divisible by ", tp);
    MESHNN_CHECK(p.n_vlsa == 0 || cfg.vl.ff_dim % tp == 0, vn, ": head-parallel over ", tp,
                 " devices needs ff_inner_dim (", cfg.vl.ff_dim, ") divisible by ", tp);
  }
  p.m_rows = (p.s_active + tp - 1) / tp * tp;
  MESHNN_CHECK(p.m_rows <= p.s_pad, vn, ": ", p.s_active, " active slots rounded up to ", tp,
               " devices exceed S_pad=", p.s_pad);

  plan_key_sets(cfg, layout, p);
  std::set<int64_t> lengths;
  for (int i : cfg.dit.cross_block_indices()) {
    const std::string ks = cfg.dit.key_set(i);
    MESHNN_CHECK(p.key_sets.count(ks), "block ", i, ": key set '", ks,
                 "' not among the layout's sets");
    p.blocks.push_back({i, ks, p.key_sets[ks].l_pad});
    lengths.insert(p.key_sets[ks].l_pad);
  }
  MESHNN_CHECK(!p.blocks.empty(), vn, ": no cross blocks");
  p.hoist_lengths.assign(lengths.begin(), lengths.end());

  if (weights)
    require_weights(describe_adapter(cfg, weight_prefix), *weights, std::string(vn) + " adapter");
  return p;
}

std::vector<std::string> AdapterPlan::gathered_sets() const {
  std::vector<std::string> out;
  for (const auto& [n, k] : key_sets)
    if (!k.identity) out.push_back(n);
  return out;
}

std::string AdapterPlan::describe() const {
  json j;
  j["version"] = version_name(config.version);
  j["gather_mode"] = gather_mode_name(options.gather_mode);
  j["precision"] = precision_name(options.precision);
  j["hoist_precision"] = precision_name(options.hoist_precision);
  j["state_precision"] = precision_name(options.state_precision);
  j["s_pad"] = s_pad;
  j["s_active"] = s_active;
  j["seq_len"] = layout.seq_len();
  j["dim"] = dim;
  j["n_vlsa"] = n_vlsa;
  j["vlsa"] = {{"heads", config.vl.n_heads}, {"head_dim", config.vl.head_dim},
               {"ff_dim", config.vl.ff_dim}, {"eps", config.vl.ln_eps},
               {"scale", vlsa_scale},        {"activation", config.vl.activation}};
  j["vl_mask"] = vl_mask_present;
  j["dit"] = {{"heads", n_heads}, {"head_dim", head_dim}, {"kv_width", kv_width}};
  json ks = json::object();
  for (const auto& [n, k] : key_sets) {
    json runs = json::array();
    for (auto& [b, e] : k.runs) runs.push_back({b, e});
    ks[n] = {{"l_real", k.l_real},
             {"l_pad", k.l_pad},
             {"runs", runs},
             {"mask", k.mask_present},
             {"identity", k.identity}};
  }
  j["key_sets"] = ks;
  json bl = json::array();
  for (const auto& b : blocks)
    bl.push_back({{"dit_block", b.block}, {"key_set", b.key_set}, {"l_pad", b.l_pad}});
  j["blocks"] = bl;
  j["hoist_lengths"] = hoist_lengths;
  j["state"] = {{"d_max", config.state.max_state_dim},
                {"d_pad", config.state.state_dim_pad},
                {"rows", config.row_block},
                {"hidden", config.state.hidden_size},
                {"out", config.state.input_embedding_dim},
                {"embodiments", config.state.num_embodiments}};
  j["weight_prefix"] = weight_prefix;
  j["head_parallel"] = {
      {"devices", tp}, {"index", tp_rank}, {"mesh_axis", options.mesh_axis}, {"vlsa_rows", m_rows}};
  return j.dump(2);
}

}  // namespace meshnn::gr00t