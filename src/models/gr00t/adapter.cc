// GR00T VL adapter forward: vlln → VL-SA × n → gather → hoisted cross K/V → state encoder.
#include "models/gr00t/adapter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "dnnl/matmul.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "layers/transformer_block.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/profile.h"
#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/description.h"

namespace meshnn::gr00t {

namespace {

Tensor need(const WeightLookup& w, const std::string& key) {
  std::optional<Tensor> t = w(key);
  MESHNN_CHECK_AS(WeightError, t.has_value(), "checkpoint is missing '", key, "'");
  return t->dtype() == DType::f32 ? *t : t->to(DType::f32);
}

// Accepts (1, 1, S, D) | (1, S, D) | (S, D); returns a dense f32 (S, D) tensor.
Tensor as_rows(const Tensor& x, int64_t s, int64_t d, const char* name) {
  MESHNN_CHECK(x.defined(), name, " is undefined");
  const bool shape_ok = (x.rank() == 4 && x.dim(0) == 1 && x.dim(1) == 1) ||
                        (x.rank() == 3 && x.dim(0) == 1) || x.rank() == 2;
  MESHNN_CHECK_AS(ShapeError, shape_ok && x.dim(-2) == s && x.dim(-1) == d, name,
                  " must be [1, 1, ", s, ", ", d, "], got ", shape_str(x.shape()));
  MESHNN_CHECK_AS(ShapeError,
                  x.dtype() == DType::f32 || x.dtype() == DType::bf16 || x.dtype() == DType::f64,
                  name, " must be f32 (or bf16), got ", dtype_name(x.dtype()));
  Tensor f = x.dtype() == DType::f32 ? x : x.to(DType::f32);
  return f.reshape({s, d});
}

// The rows the VL self-attention computes: the active slots, rounded up to the head-parallel
// group (m_rows) when split.
int64_t vlsa_rows(const AdapterPlan& p) { return p.tp > 1 ? p.m_rows : p.s_active; }

}  // namespace

struct VlAdapter::Impl {
  Device* device = nullptr;
  AdapterPlan plan;
  layers::LayerNorm vlln;
  std::vector<layers::TransformerBlock> vlsa;  // head-parallel over the mesh axis when tp > 1
  std::map<int, layers::Linear> hoist;         // cross block → fused [to_k; to_v] (2·inner, D)
  std::map<int, Tensor> hoist_bias;            // cross block → bkv (2·inner) f32
  layers::CategorySpecificMlp state_encoder;
  std::map<int, std::pair<Tensor, Tensor>> kv;  // persistent (1, Nh, L_pad, Dh)
  std::map<std::string, Tensor> onehot;         // key set → (L_pad, S_pad)
  std::vector<uint8_t> layout_key_valid;
  Tensor proj;  // (max L_pad, kv_width) hoist scratch
  bool released = false;
  bool collect_taps = false;
  int64_t hoist_projections = 0;

  // The stages of VlAdapter::forward, in order (defined beside it).
  int64_t self_attention(const Tensor& x_in, const std::vector<uint8_t>& key_valid,
                         AdapterOutputs& out);
  void gather(AdapterOutputs& out) const;
  void hoist_cross_kv(AdapterOutputs& out, int64_t Sa);
  void encode_state(const Tensor& srows, int embodiment, AdapterOutputs& out);
};

VlAdapter::VlAdapter(const Config& cfg, const SlotLayout& layout, const WeightLookup& weights,
                     const AdapterOptions& options, const std::string& weight_prefix,
                     Device* device)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  int tp = 1, tp_rank = 0;
  if (device && device->axis_size(options.mesh_axis) > 1) {
    m.device = device;
    tp = device->axis_size(options.mesh_axis);
    tp_rank = device->coord(options.mesh_axis);
  }
  m.plan = build_adapter_plan(cfg, layout, options, &weights, weight_prefix, tp, tp_rank);
  m.collect_taps = options.collect_taps;
  const AdapterPlan& p = m.plan;
  // Every key from the adapter's table (models/gr00t/description.cc), checked in plan().
  const AdapterWeights aw = adapter_weights(cfg, weight_prefix);
  auto w_of = [&](const LayerDesc& l) { return need(weights, l.weight_key()); };
  auto b_of = [&](const LayerDesc& l) { return need(weights, l.bias_key()); };
  m.vlln = layers::LayerNorm(w_of(aw.vlln), b_of(aw.vlln), static_cast<float>(cfg.vl.vlln_eps));
  for (int i = 0; i < p.n_vlsa; ++i) {
    const AdapterWeights::VlsaBlock& b = aw.vlsa[i];
    layers::TransformerBlockWeights w;
    w.norm1_w = w_of(b.norm1);
    w.norm1_b = b_of(b.norm1);
    w.to_q_w = w_of(b.q);
    w.to_q_b = b_of(b.q);
    w.to_k_w = w_of(b.k);
    w.to_k_b = b_of(b.k);
    w.to_v_w = w_of(b.v);
    w.to_v_b = b_of(b.v);
    w.to_out_w = w_of(b.out);
    w.to_out_b = b_of(b.out);
    w.norm3_w = w_of(b.norm3);
    w.norm3_b = b_of(b.norm3);
    w.ff1_w = w_of(b.ff1);
    w.ff1_b = b_of(b.ff1);
    w.ff2_w = w_of(b.ff2);
    w.ff2_b = b_of(b.ff2);
    m.vlsa.emplace_back(w, cfg.vl.n_heads, cfg.vl.head_dim, static_cast<float>(cfg.vl.ln_eps),
                        options.precision,
                        layers::TensorParallel{options.mesh_axis, p.tp, p.tp_rank});
    m.vlsa.back().prepare(vlsa_rows(p));
  }
  int64_t max_l = 0;
  for (const HoistBlockPlan& hb : p.blocks) {
    const auto kv =
        std::find_if(aw.cross_kv.begin(), aw.cross_kv.end(),
                     [&](const AdapterWeights::CrossKv& c) { return c.k.block == hb.block; });
    MESHNN_CHECK(kv != aw.cross_kv.end(), "GR00T adapter: DiT block ", hb.block,
                 " is not a cross block");
    // Wkv = [to_k; to_v] (2·inner, D): one product per block, K in the first inner columns.
    // Head-parallel: only this device's heads (rows [rank·inner/tp, …) of each).
    const int64_t il = p.n_heads / p.tp * p.head_dim, r0 = p.tp_rank * il;
    Tensor w = concat({w_of(kv->k).narrow(0, r0, il), w_of(kv->v).narrow(0, r0, il)}, 0);
    Tensor bias = concat({b_of(kv->k).narrow(0, r0, il), b_of(kv->v).narrow(0, r0, il)}, 0);
    m.hoist.emplace(hb.block, layers::Linear::from_out_in(w, bias, layers::Activation::none,
                                                          options.hoist_precision));
    m.hoist_bias[hb.block] = bias;
    // Persistent K/V, allocated (and zeroed, so every page is touched) once; forward only
    // writes into them, so their addresses never change until release().
    const int64_t hl = p.n_heads / p.tp;
    m.kv.emplace(hb.block, std::make_pair(Tensor({1, hl, hb.l_pad, p.head_dim}),
                                          Tensor({1, hl, hb.l_pad, p.head_dim})));
    max_l = std::max(max_l, hb.l_pad);
  }
  m.proj = Tensor({max_l, p.kv_width / p.tp});
  m.state_encoder = layers::CategorySpecificMlp(w_of(aw.state_layer1), b_of(aw.state_layer1),
                                                w_of(aw.state_layer2), b_of(aw.state_layer2),
                                                cfg.state.state_dim_pad, options.state_precision);
  if (options.gather_mode == GatherMode::onehot)
    for (const std::string& ks : p.gathered_sets()) m.onehot[ks] = layout.onehot_gather_matrix(ks);
  m.layout_key_valid = layout.key_valid();
}

VlAdapter::~VlAdapter() = default;

std::unique_ptr<VlAdapter> VlAdapter::fork() const {
  const Impl& m = *impl_;
  MESHNN_CHECK(!m.released, version_name(m.plan.config.version),
               ": fork() of a released adapter (its K/V buffers are gone)");
  std::unique_ptr<VlAdapter> out(new VlAdapter());
  // The layers' copies share their weights (Linear forks); scratch and K/V are made anew.
  out->impl_ = std::make_unique<Impl>(m);
  Impl& f = *out->impl_;
  for (auto& [block, kv] : f.kv) kv = {Tensor(kv.first.shape()), Tensor(kv.second.shape())};
  f.proj = Tensor(m.proj.shape());
  f.hoist_projections = 0;
  for (layers::TransformerBlock& b : f.vlsa) b.prepare(vlsa_rows(f.plan));
  return out;
}

void VlAdapter::bind_device(Device* device) {
  Impl& m = *impl_;
  const AdapterPlan& p = m.plan;
  if (p.tp == 1) return;  // one device: no collective, nothing to bind
  if (device) {
    MESHNN_CHECK(device->axis_size(p.options.mesh_axis) == p.tp &&
                     device->coord(p.options.mesh_axis) == p.tp_rank,
                 version_name(p.config.version), ": this adapter slice is head group ", p.tp_rank,
                 " of ", p.tp, " on mesh axis ", p.options.mesh_axis, "; the device is ",
                 device->coord(p.options.mesh_axis), " of ",
                 device->axis_size(p.options.mesh_axis));
  }
  m.device = device;
}

const AdapterPlan& VlAdapter::plan() const { return impl_->plan; }
int64_t VlAdapter::hoist_projections() const { return impl_->hoist_projections; }

namespace {

// vl_mask: (S_pad) of 0 / 1, or undefined when the version has no VL self-attention → one byte
// per slot (empty when undefined). Checked before any compute.
std::vector<uint8_t> key_valid_of(const AdapterPlan& p, const Tensor& vl_mask) {
  const char* vn = version_name(p.config.version);
  MESHNN_CHECK(vl_mask.defined() == p.vl_mask_present, vn, ": vl_mask presence ",
               vl_mask.defined() ? "true" : "false", " != fixed ",
               p.vl_mask_present ? "true" : "false",
               p.vl_mask_present ? " (the VL self-attention needs the key-valid mask)"
                                 : " (this version has no VL self-attention)");
  std::vector<uint8_t> key_valid;
  if (!vl_mask.defined()) return key_valid;
  MESHNN_CHECK_AS(ShapeError, vl_mask.numel() == p.s_pad && vl_mask.dim(-1) == p.s_pad,
                  "vl_mask must be a (", p.s_pad, ") key-valid mask, got ",
                  shape_str(vl_mask.shape()));
  const Tensor mk = vl_mask.to(DType::f64);
  key_valid.resize(static_cast<size_t>(p.s_pad));
  bool any = false;
  for (int64_t s = 0; s < p.s_pad; ++s) {
    const double v = mk.data<double>()[s];
    MESHNN_CHECK(v == 0 || v == 1, "vl_mask[", s, "] = ", v, " (expected 0 or 1)");
    key_valid[s] = v != 0;
    any = any || key_valid[s];
  }
  MESHNN_CHECK(any, "vl_mask hides every key");
  return key_valid;
}

// state: (…, ≤ max_state_dim) or undefined → the padded (row_block, state_dim_pad) rows the state
// encoder reads (undefined when state is). Checked before any compute.
Tensor state_rows_of(const AdapterPlan& p, const Tensor& state, int embodiment) {
  if (!state.defined()) return Tensor();
  // The state encoder reads max_state_dim columns (as the policy checks): a wider state would
  // be silently cut to the padded width.
  MESHNN_CHECK_AS(ShapeError, state.rank() >= 1 && state.dim(-1) <= p.config.state.max_state_dim,
                  version_name(p.config.version), ": state width ",
                  state.rank() ? state.dim(-1) : 0, " exceeds max_state_dim ",
                  p.config.state.max_state_dim);
  Tensor srows = state_rows(state, p.config.state.state_dim_pad, p.config.row_block);
  MESHNN_CHECK(embodiment >= 0 && embodiment < p.config.state.num_embodiments, "embodiment id ",
               embodiment, " is out of range [0, ", p.config.state.num_embodiments, ")");
  return srows;
}

}  // namespace

// x_in: (S_pad, D) features → out.vl (1, 1, S_pad, D): vlln + VL self-attention, on the active
// slots only; returns the rows computed (Sa).
int64_t VlAdapter::Impl::self_attention(const Tensor& x_in, const std::vector<uint8_t>& key_valid,
                                        AdapterOutputs& out) {
  const AdapterPlan& p = plan;
  // Slots at or beyond s_active never hold a token: computing them would only produce rows
  // the key-valid mask hides, so they are skipped (and left zero).
  const int64_t D = p.dim, Sa = vlsa_rows(p);
  out.vl = Tensor({1, 1, p.s_pad, D});
  float* vl = out.vl.data<float>();
  vlln.forward_rows(x_in.data<float>(), Sa, D, vl, D);
  auto tap = [&](const std::string& name) {
    if (collect_taps) out.taps[name] = out.vl.clone();
  };
  tap("vlln_out");
  CclManager* ccl = p.tp > 1 ? &device->ccl() : nullptr;
  for (size_t i = 0; i < vlsa.size(); ++i) {
    vlsa[i].forward(vl, Sa, key_valid.data(), ccl);
    tap("vlsa_block" + std::to_string(i) + "_out");
  }
  if (p.n_vlsa) tap("vl_self_attention_out");
  // Empty slots are zeroed so every key set's pad rows are exactly zero and their K/V rows equal
  // the bias (the seed leaves LN(0)-derived values there, hidden by the DiT's mask either way).
  for (int64_t s = 0; s < Sa; ++s)
    if (!layout_key_valid[s]) std::memset(vl + s * D, 0, sizeof(float) * D);
  tap("dit_encoder_hidden_states");
  return Sa;
}

// out.vl (1, 1, S_pad, D) → out.vl_sets[key set] (1, 1, L_pad, D): each key set's slots gathered.
void VlAdapter::Impl::gather(AdapterOutputs& out) const {
  const AdapterPlan& p = plan;
  const int64_t D = p.dim;
  const float* vl = out.vl.data<float>();
  for (const auto& [name, ks] : p.key_sets) {
    if (ks.identity) {
      out.vl_sets[name] = out.vl;
      continue;
    }
    Tensor g({1, 1, ks.l_pad, D});  // zero: rows ≥ L_real stay exactly zero
    if (p.options.gather_mode == GatherMode::splice) {
      int64_t cursor = 0;
      for (const auto& [b, e] : ks.runs) {
        std::memcpy(g.data<float>() + cursor * D, vl + b * D, sizeof(float) * (e - b) * D);
        cursor += e - b;
      }
      MESHNN_CHECK_AS(Error, cursor == ks.l_real, name, ": runs give ", cursor, " rows, expected ",
                      ks.l_real);
    } else {
      // P (L_pad, S_pad) · vl (S_pad, D) in f32: one non-zero product per output, so exact.
      dnnl_glue::StridedMatmul mm;
      mm.M = ks.l_pad, mm.K = p.s_pad, mm.N = D;
      mm.src_strides[0] = ks.l_pad * p.s_pad, mm.src_strides[1] = p.s_pad, mm.src_strides[2] = 1;
      mm.wei_strides[0] = p.s_pad * D, mm.wei_strides[1] = D, mm.wei_strides[2] = 1;
      mm.dst_strides[0] = ks.l_pad * D, mm.dst_strides[1] = D, mm.dst_strides[2] = 1;
      dnnl_glue::strided_matmul(mm, onehot.at(name).data<float>(), vl, g.data<float>());
    }
    out.vl_sets[name] = g;
  }
}

// out.vl_sets → out.kv[cross block] = persistent (K, V), each (1, Nh/tp, L_pad, Dh); Sa: the
// rows self_attention computed.
void VlAdapter::Impl::hoist_cross_kv(AdapterOutputs& out, int64_t Sa) {
  const AdapterPlan& p = plan;
  const int64_t D = p.dim;
  const int64_t H = p.n_heads / p.tp, Dh = p.head_dim, inner = H * Dh, W = p.kv_width / p.tp;
  for (const HoistBlockPlan& hb : p.blocks) {
    const float* src = out.vl_sets.at(hb.key_set).data<float>();
    float* pr = proj.data<float>();
    // Rows past the real keys are exactly zero, so their K/V rows are the bias: only the real
    // rows go through the matmul ("all": the active slots; empty slots inside are zero rows).
    const KeySetPlan& ks = p.key_sets.at(hb.key_set);
    const int64_t rows = ks.identity ? std::min(Sa, hb.l_pad) : ks.l_real;
    hoist.at(hb.block).forward_rows(src, rows, D, pr, W);
    ++hoist_projections;
    const float* bkv = hoist_bias.at(hb.block).data<float>();
    for (int64_t l = rows; l < hb.l_pad; ++l) std::memcpy(pr + l * W, bkv, sizeof(float) * W);
    auto& [K, V] = kv.at(hb.block);
    float* k = K.data<float>();
    float* v = V.data<float>();
    const int64_t L = hb.l_pad;
    // Head split (L, Nh·Dh) → (Nh, L, Dh): head h is columns h·Dh … h·Dh + Dh − 1.
    ProfileScope prof_split("kv_head_split");
#pragma omp parallel for schedule(static)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t l = 0; l < L; ++l) {
        std::memcpy(k + (h * L + l) * Dh, pr + l * W + h * Dh, sizeof(float) * Dh);
        std::memcpy(v + (h * L + l) * Dh, pr + l * W + inner + h * Dh, sizeof(float) * Dh);
      }
    out.kv[hb.block] = {K, V};
  }
}

// srows: (row_block, state_dim_pad) → out.state_features (1, 1, input_embedding_dim).
void VlAdapter::Impl::encode_state(const Tensor& srows, int embodiment, AdapterOutputs& out) {
  const Config& c = plan.config;
  // Only row 0 of the 32-row block is a state; rows 1 … 31 are tile padding whose
  // output (relu(b1)·W2 + b2) nobody reads, so one row is computed.
  const Tensor row0 = srows.reshape({c.row_block, c.state.state_dim_pad}).narrow(0, 0, 1);
  out.state_features =
      state_encoder.forward(row0, embodiment).reshape({1, 1, c.state.input_embedding_dim});
  if (collect_taps) out.taps["state_features"] = out.state_features;
}

AdapterOutputs VlAdapter::forward(const Tensor& features, const Tensor& vl_mask,
                                  const Tensor& state, int embodiment) {
  ProfileScope prof_all("gr00t_forward");
  Impl& m = *impl_;
  const AdapterPlan& p = m.plan;
  const char* vn = version_name(p.config.version);
  MESHNN_CHECK(!m.released, vn, ": forward after release() (the persistent K/V buffers are gone)");
  MESHNN_CHECK(p.tp == 1 || m.device, vn,
               ": this head-parallel adapter is not bound to a device (bind_device)");
  // Every input is validated before any compute.
  check_finite(features, "features");  // NaN / Inf would flow into every output
  const Tensor x_in = as_rows(features, p.s_pad, p.dim, "features");
  const std::vector<uint8_t> key_valid = key_valid_of(p, vl_mask);
  const Tensor srows = state_rows_of(p, state, embodiment);

  AdapterOutputs out;
  const int64_t Sa = m.self_attention(x_in, key_valid, out);
  m.gather(out);
  m.hoist_cross_kv(out, Sa);
  if (state.defined()) m.encode_state(srows, embodiment, out);
  return out;
}

void VlAdapter::free_outputs(AdapterOutputs& out) {
  // Tensors are shared handles: dropping each handle once frees per-call memory; the persistent
  // K/V stay referenced by the adapter.
  out.vl = Tensor();
  out.vl_sets.clear();
  out.kv.clear();
  out.state_features = Tensor();
  out.taps.clear();
}

void VlAdapter::release() {
  impl_->kv.clear();
  impl_->onehot.clear();
  impl_->proj = Tensor();
  impl_->released = true;
}

std::string VlAdapter::describe() const {
  nlohmann::json j = nlohmann::json::parse(impl_->plan.describe());
  if (!impl_->hoist.empty()) {
    auto& l = impl_->hoist.begin()->second;
    j["hoist_impl"] = l.primitive().impl_info(impl_->plan.blocks.front().l_pad, false);
    j["bf16_native"] = l.primitive().native_bf16();
  }
  j["released"] = impl_->released;
  return j.dump(2);
}

// make_random_checkpoint: models/gr00t/description.cc (from the key table).

}  // namespace meshnn::gr00t
