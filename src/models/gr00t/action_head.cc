// GR00T action head: its layers loaded per device (DiT blocks, action encoder and decoder per
// embodiment), the per-timestep caches, fork / bind / describe. The DiT runs in dit_block.cc,
// the Euler loop in euler.cc, the policy in policy.cc.
#include "models/gr00t/action_head.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/action_head_impl.h"
#include "models/gr00t/description.h"

namespace meshnn::gr00t {

using nlohmann::json;

// ActionHeadConfig (defaults, strict JSON reading): models/gr00t/head_config.cc.
// The action head's keys and shapes: models/gr00t/description.cc (the key table).

// ------------------------------------------------------------------------------------------------
// helpers
// ------------------------------------------------------------------------------------------------

namespace {

using layers::Activation;

// Timestep sinusoids in double, rounded once to f32 (the reference computes them in f32; the
// difference is a few 1e-6 relative at t = 750, see the numerics notes in docs/gr00t.md).
// diffusers Timesteps(256, flip_sin_to_cos, shift 1): [cos(t·f_j) | sin(t·f_j)], f_j =
// exp(−ln(1e4)·j/127).
Tensor timestep_sinusoid(int t) {
  Tensor e({1, 256});
  float* d = e.data<float>();
  for (int j = 0; j < 128; ++j) {
    const double arg = t * std::exp(-std::log(10000.0) * j / 127.0);
    d[j] = static_cast<float>(std::cos(arg));
    d[128 + j] = static_cast<float>(std::sin(arg));
  }
  return e;
}

// SinusoidalPositionalEncoding(dim): [sin(t·g_j) | cos(t·g_j)], g_j = exp(−j·ln(1e4)/(dim/2)).
Tensor action_sinusoid(int t, int64_t dim) {
  Tensor e({1, dim});
  float* d = e.data<float>();
  const int64_t half = dim / 2;
  for (int64_t j = 0; j < half; ++j) {
    const double arg = t * std::exp(-static_cast<double>(j) * std::log(10000.0) / half);
    d[j] = static_cast<float>(std::sin(arg));
    d[half + j] = static_cast<float>(std::cos(arg));
  }
  return e;
}

// Per-step GEMMs have few rows (N ≈ 50): the primitive with weights packed once (fp32), or the
// native bf16 kernel (already packed).
Linear packed(Linear l) {
  l.primitive().set_packed_f32(true);
  return l;
}

void silu_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.f + std::exp(-x[i]));
}

// The DiT blocks, this device's share of each: q / k / v rows and to_out columns of its heads,
// FF1 rows and FF2 columns of its FF slice (w_of / b_of: a layer's f32 weight / bias).
template <class WeightOf, class BiasOf>
void load_blocks(ActionHead::Impl& m, const ActionHeadWeights& hw, const WeightOf& w_of,
                 const BiasOf& b_of, Precision p) {
  // A device's rows / columns of a weight; the tensor itself (no copy) on one device.
  auto part = [](const Tensor& t, int d, int64_t start, int64_t len) {
    return start == 0 && len == t.dim(d) ? t : t.narrow(d, start, len);
  };
  const std::vector<int> cross = m.cfg.dit.cross_block_indices();
  const int64_t dl = m.heads_local * m.dh, c0 = m.rank * dl, f0 = m.rank * m.ff_local;
  for (int i = 0; i < m.cfg.dit.n_layers; ++i) {
    DitBlock blk;
    blk.index = i;
    blk.cross = std::find(cross.begin(), cross.end(), i) != cross.end();
    blk.key_set = blk.cross ? m.cfg.dit.key_set(i) : "";
    blk.ada =
        Linear::from_out_in(w_of(hw.blocks[i].ada), b_of(hw.blocks[i].ada), Activation::none, p);
    blk.q = packed(Linear::from_out_in(part(w_of(hw.blocks[i].q), 0, c0, dl),
                                       part(b_of(hw.blocks[i].q), 0, c0, dl), Activation::none, p));
    if (!blk.cross) {
      Tensor w =
          concat({part(w_of(hw.blocks[i].k), 0, c0, dl), part(w_of(hw.blocks[i].v), 0, c0, dl)}, 0);
      Tensor bb =
          concat({part(b_of(hw.blocks[i].k), 0, c0, dl), part(b_of(hw.blocks[i].v), 0, c0, dl)}, 0);
      blk.kv = packed(Linear::from_out_in(w, bb, Activation::none, p));
    }
    blk.out = packed(Linear::from_out_in(part(w_of(hw.blocks[i].out), 1, c0, dl), Tensor(),
                                         Activation::none, p));
    blk.bo = b_of(hw.blocks[i].out);
    blk.ff1 = packed(Linear::from_out_in(part(w_of(hw.blocks[i].ff1), 0, f0, m.ff_local),
                                         part(b_of(hw.blocks[i].ff1), 0, f0, m.ff_local),
                                         Activation::gelu_tanh, p));
    blk.ff2 = packed(Linear::from_out_in(part(w_of(hw.blocks[i].ff2), 1, f0, m.ff_local), Tensor(),
                                         Activation::none, p));
    blk.b2 = b_of(hw.blocks[i].ff2);
    m.blocks.push_back(std::move(blk));
  }
}

}  // namespace

namespace head_detail {

bool all_finite(const Tensor& t) {
  const Tensor f = t.dtype() == DType::f32 ? t : t.to(DType::f32);
  const float* d = f.data<float>();
  for (int64_t i = 0; i < f.numel(); ++i)
    if (!std::isfinite(d[i])) return false;
  return true;
}

}  // namespace head_detail

Bucket& ActionHead::Impl::bucket(int t) {
  auto it = buckets.find(t);
  if (it != buckets.end()) return it->second;
  ++stats.timestep_buckets_computed;
  Bucket b;
  // temb = linear_2(SiLU(linear_1(sinusoid(t)))); the blocks and the output read SiLU(temb).
  Tensor e1 = t_lin1.forward(timestep_sinusoid(t));  // (1, D)
  silu_inplace(e1.data<float>(), D);
  Tensor temb = t_lin2.forward(e1);
  silu_inplace(temb.data<float>(), D);  // every consumer reads SiLU(temb)
  for (DitBlock& blk : blocks) b.mod.push_back(blk.ada.forward(temb).reshape({2 * D}));
  b.out_mod = proj_out_1.forward(temb).reshape({2 * D});
  return buckets.emplace(t, std::move(b)).first->second;
}

EncoderSlice& ActionHead::Impl::encoder(int e) {
  auto it = enc.find(e);
  if (it != enc.end()) return it->second;
  EncoderSlice s;
  auto slice = [](const Tensor& w, int e, int64_t r0, int64_t rows) {
    const int64_t in = w.dim(1), out = w.dim(2);
    return w.narrow(0, e, 1).reshape({in, out}).narrow(0, r0, rows);
  };
  auto bias = [](const Tensor& b, int e) { return b.narrow(0, e, 1).reshape({b.dim(1)}); };
  s.w1 = packed(Linear::from_in_out(slice(w1, e, 0, A), bias(b1, e), Activation::none, prec()));
  s.w2a = packed(Linear::from_in_out(slice(w2, e, 0, D), Tensor(), Activation::none, prec()));
  s.w2t = Linear::from_in_out(slice(w2, e, D, D), bias(b2, e), Activation::none, prec());
  s.w3 = packed(Linear::from_in_out(slice(w3, e, 0, D), bias(b3, e), Activation::none, prec()));
  return enc.emplace(e, std::move(s)).first->second;
}

const Tensor& ActionHead::Impl::enc_time(Bucket& b, int t, int e) {
  auto it = b.enc_time.find(e);
  if (it != b.enc_time.end()) return it->second;
  Tensor v = encoder(e).w2t.forward(action_sinusoid(t, D)).reshape({D});
  return b.enc_time.emplace(e, v).first->second;
}

void ActionHead::validate(const Config& cfg, const ActionHeadConfig& hc,
                          const WeightLookup& weights, const std::string& prefix, int tp) {
  cfg.validate();
  const char* vn = version_name(cfg.version);
  const int64_t inner = cfg.dit.inner_dim();
  MESHNN_CHECK(cfg.state.input_embedding_dim == inner, vn, ": input_embedding_dim ",
               cfg.state.input_embedding_dim, " != DiT inner dim ", inner,
               " (num_attention_heads · attention_head_dim)");
  MESHNN_CHECK(tp >= 1 && cfg.dit.n_heads % tp == 0, vn, ": ", cfg.dit.n_heads,
               " DiT heads do not split over ", tp, " devices");
  MESHNN_CHECK(cfg.dit.interleave_self_attention, vn,
               ": the action head needs interleave_self_attention (cross / self blocks alternate)");
  // Every key and shape from the head's table (models/gr00t/description.cc), all at once.
  require_weights(flatten(action_head_weights(cfg, hc, prefix)), weights,
                  detail::concat(vn, " action head (prefix '", prefix, "')"));
}

ActionHead::ActionHead(const Config& cfg, const ActionHeadConfig& hc, const WeightLookup& weights,
                       const ActionHeadOptions& options, const std::string& prefix, Device* device)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.cfg = cfg;
  m.hc = hc;
  m.opt = options;
  if (device && device->axis_size(options.mesh_axis) > 1) {
    m.device = device;
    m.tp = device->axis_size(options.mesh_axis);
    m.rank = device->coord(options.mesh_axis);
  }
  m.D = cfg.dit.inner_dim();
  m.O = cfg.state.hidden_size;
  m.A = hc.action_dim;
  m.T = hc.action_horizon;
  m.F = hc.future_tokens;
  m.N = 1 + m.F + m.T;
  m.dh = cfg.dit.head_dim;
  // ---- every key and shape checked up front; all problems listed at once -------------------
  validate(cfg, hc, weights, prefix, m.tp);
  m.heads_local = cfg.dit.n_heads / m.tp;
  m.ff_local = 4 * m.D / m.tp;
  m.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(m.dh)));

  const ActionHeadWeights hw = action_head_weights(cfg, hc, prefix);
  auto get = [&](const std::string& key) {
    Tensor t = *weights(key);
    return t.dtype() == DType::f32 ? t : t.to(DType::f32);
  };

  auto w_of = [&](const LayerDesc& l) { return get(l.weight_key()); };
  auto b_of = [&](const LayerDesc& l) { return get(l.bias_key()); };
  const Precision p = options.precision;
  m.t_lin1 = Linear::from_out_in(w_of(hw.timestep_linear1), b_of(hw.timestep_linear1),
                                 Activation::none, p);
  m.t_lin2 = Linear::from_out_in(w_of(hw.timestep_linear2), b_of(hw.timestep_linear2),
                                 Activation::none, p);
  // t_lin1's SiLU is applied between the two products
  m.proj_out_1 = Linear::from_out_in(w_of(hw.proj_out_1), b_of(hw.proj_out_1), Activation::none, p);
  m.proj_out_2 =
      packed(Linear::from_out_in(w_of(hw.proj_out_2), b_of(hw.proj_out_2), Activation::none, p));
  // Non-affine norms as γ = 1, β = 0 (exact: x·1 + 0).
  Tensor ones({m.D}), zeros({m.D});
  for (int64_t i = 0; i < m.D; ++i) ones.data<float>()[i] = 1.f;
  m.ln5 = layers::LayerNorm(ones, zeros, 1e-5f);
  m.ln6 = layers::LayerNorm(ones, zeros, 1e-6f);
  load_blocks(m, hw, w_of, b_of, p);
  const int64_t dl = m.heads_local * m.dh;
  m.w1 = w_of(hw.encoder_w1), m.b1 = b_of(hw.encoder_w1);
  m.w2 = w_of(hw.encoder_w2), m.b2 = b_of(hw.encoder_w2);
  m.w3 = w_of(hw.encoder_w3), m.b3 = b_of(hw.encoder_w3);
  m.decoder = layers::CategorySpecificMlp(w_of(hw.decoder_layer1), b_of(hw.decoder_layer1),
                                          w_of(hw.decoder_layer2), b_of(hw.decoder_layer2), m.O, p);
  m.pos = w_of(hw.position_embedding).narrow(0, 0, m.T);
  if (m.F > 0) m.future = w_of(hw.future_tokens);

  m.h = Tensor({m.N, m.D});
  m.x = Tensor({m.N, m.D});
  m.qb = Tensor({m.N, dl});
  m.kvb = Tensor({m.N, 2 * dl});
  m.att = Tensor({m.N, dl});
  m.part = Tensor({m.N, m.D});
  m.hid = Tensor({m.N, m.ff_local});
  m.y = Tensor({m.T, m.O});
}

ActionHead::~ActionHead() = default;

std::unique_ptr<ActionHead> ActionHead::fork() const {
  const Impl& m = *impl_;
  std::unique_ptr<ActionHead> out(new ActionHead());
  // The layers' copies share their weights (Linear forks); scratch, caches and counters anew.
  out->impl_ = std::make_unique<Impl>(m);
  Impl& f = *out->impl_;
  f.buckets.clear();
  f.stats = ActionHeadStats();
  for (Tensor* t : {&f.h, &f.x, &f.qb, &f.kvb, &f.att, &f.part, &f.hid, &f.scores, &f.y})
    if (t->defined()) *t = Tensor(t->shape());
  return out;
}

void ActionHead::bind_device(Device* device) {
  Impl& m = *impl_;
  if (m.tp == 1) return;  // one device: no collective, nothing to bind
  if (device) {
    MESHNN_CHECK(
        device->axis_size(m.opt.mesh_axis) == m.tp && device->coord(m.opt.mesh_axis) == m.rank,
        version_name(m.cfg.version), ": this head slice is head group ", m.rank, " of ", m.tp,
        " on mesh axis ", m.opt.mesh_axis, "; the device is ", device->coord(m.opt.mesh_axis),
        " of ", device->axis_size(m.opt.mesh_axis));
  }
  m.device = device;
}

const ActionHeadConfig& ActionHead::head_config() const { return impl_->hc; }
const ActionHeadStats& ActionHead::stats() const { return impl_->stats; }

std::string ActionHead::describe() const {
  const Impl& m = *impl_;
  json j = json::parse(m.hc.to_json());
  j["gr00t_version"] = version_name(m.cfg.version);
  j["dit_layers"] = m.cfg.dit.n_layers;
  j["dit_tokens"] = m.N;
  j["heads_per_device"] = m.heads_local;
  j["tp"] = m.tp;
  j["precision"] = precision_name(m.opt.precision);
  std::vector<std::string> ks;
  for (const DitBlock& b : m.blocks) ks.push_back(b.cross ? b.key_set : "self");
  j["blocks"] = ks;
  return j.dump(2);
}

}  // namespace meshnn::gr00t
