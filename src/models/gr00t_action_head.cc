// GR00T action head: DiT (N1.5 DiT / N1.6-N1.7 AlternateVLDiT) with AdaLN, action encoder and
// decoder per embodiment, and the Euler flow-matching loop, on the adapter's hoisted cross K/V.
// Long (~670 lines): the DiT block, the embodiment layers and the loop share one plan and scratch.
#include "meshnn/models/gr00t_action_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "io/json.h"
#include "layers/attention.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t_description.h"

namespace meshnn::gr00t {

using nlohmann::json;

// ActionHeadConfig (defaults, strict JSON reading): models/gr00t_head_config.cc.
// action_head_weight_shapes: models/gr00t_description.cc (the key table).

// ------------------------------------------------------------------------------------------------
// helpers
// ------------------------------------------------------------------------------------------------

namespace {

using layers::Activation;
using layers::Linear;

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

bool all_finite(const Tensor& t) {
  const Tensor f = t.dtype() == DType::f32 ? t : t.to(DType::f32);
  const float* d = f.data<float>();
  for (int64_t i = 0; i < f.numel(); ++i)
    if (!std::isfinite(d[i])) return false;
  return true;
}

// Multi-head attention with per-head strided K/V (the adapter's K/V are head-major):
//   q: (Nq, H·Dh) rows ldq apart; k / v: head h, key l at base + h·hs + l·rs
//   → out (Nq, H·Dh) rows ldo apart. key_valid: Lk bytes or null. layers::multi_head_attention.
struct AttnView {
  const float* k;
  int64_t k_hs, k_rs;
  const float* v;
  int64_t v_hs, v_rs;
};

void attend(const float* q, int64_t ldq, const AttnView& kv, float* out, int64_t ldo, int64_t nq,
            int64_t lk, int64_t heads, int64_t dh, float scale, const uint8_t* key_valid,
            float* scores) {
  layers::AttentionArgs a;
  a.q = q, a.ldq = ldq;
  a.k = kv.k, a.k_hs = kv.k_hs, a.ldk = kv.k_rs;
  a.v = kv.v, a.v_hs = kv.v_hs, a.ldv = kv.v_rs;
  a.out = out, a.ldo = ldo, a.s_q = nq, a.s_k = lk, a.n_heads = heads, a.head_dim = dh;
  a.scale = scale, a.key_valid = key_valid;
  layers::multi_head_attention(a, scores);
}

// Non-affine LayerNorm of rows, then x·(1 + scale) + shift: src (M, D) → dst (M, D).
void ln_modulate(const layers::LayerNorm& ln, const float* src, int64_t M, int64_t D,
                 const float* scale, const float* shift, float* dst) {
  ln.forward_rows(src, M, D, dst, D);
  for (int64_t r = 0; r < M; ++r) {
    float* y = dst + r * D;
    for (int64_t c = 0; c < D; ++c) y[c] = y[c] * (1.f + scale[c]) + shift[c];
  }
}

}  // namespace

// ------------------------------------------------------------------------------------------------
// ActionHead
// ------------------------------------------------------------------------------------------------

struct DitBlock {
  int index = 0;
  bool cross = false;
  std::string key_set;
  Linear ada;       // norm1.linear (2D ← D), replicated: t-only
  Linear q;         // to_q, this device's heads (Dl ← D)
  Linear kv;        // self blocks: [to_k; to_v] of this device's heads (2·Dl ← D)
  Linear out;       // to_out.0 columns of this device's heads (D ← Dl), no bias
  Linear ff1, ff2;  // FF1 columns (Fl ← D) + GELU, FF2 rows (D ← Fl), no bias
  Tensor bo, b2;    // (D) biases added once after the reduction
};

struct EncoderSlice {
  Linear w1, w2a, w2t, w3;  // W1 (D ← A), W2 rows 0…D−1 (D ← D), W2 rows D…2D−1 + b2, W3
};

struct Bucket {
  std::vector<Tensor> mod;         // per block (2D): scale | shift
  Tensor out_mod;                  // (2D): shift | scale
  std::map<int, Tensor> enc_time;  // embodiment → (D) τ(t)·W2[e][D:] + b2[e]
};

struct ActionHead::Impl {
  Config cfg;
  ActionHeadConfig hc;
  ActionHeadOptions opt;
  Device* device = nullptr;
  int tp = 1, rank = 0;
  int64_t D = 0, O = 0, A = 0, T = 0, F = 0, N = 0, heads_local = 0, dh = 0, ff_local = 0;
  float scale = 1.f;
  layers::LayerNorm ln5, ln6;  // non-affine, eps 1e-5 (blocks) / 1e-6 (norm_out)
  Linear t_lin1, t_lin2, proj_out_1, proj_out_2;
  std::vector<DitBlock> blocks;
  Tensor w1, b1, w2, b2, w3, b3;  // action encoder (E, …) f32
  std::map<int, EncoderSlice> enc;
  layers::CategorySpecificMlp decoder;
  Tensor pos, future;  // (T, D), (F, D)
  std::map<int, Bucket> buckets;
  ActionHeadStats stats;
  // scratch
  Tensor h, x, qb, kvb, att, part, hid, scores, y;

  Precision prec() const { return opt.precision; }

  // part (M, D) partial sums → summed over the axis group (reduce-scatter + all-gather on the
  // feature dim, so any row count works); then dst += sum + bias.
  void reduce_add(const Tensor& p, int64_t M, float* dst, const float* bias) {
    const float* s = p.data<float>();
    Tensor full;
    if (tp > 1) {
      Tensor rs = device->ccl().reduce_scatter(p.narrow(0, 0, M), 1, opt.mesh_axis, true);
      full = device->ccl().all_gather(rs, 1, opt.mesh_axis, true);
      s = full.data<float>();
    }
    for (int64_t r = 0; r < M; ++r)
      for (int64_t c = 0; c < D; ++c) dst[r * D + c] += s[r * D + c] + bias[c];
  }

  Bucket& bucket(int t) {
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

  EncoderSlice& encoder(int e) {
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

  const Tensor& enc_time(Bucket& b, int t, int e) {
    auto it = b.enc_time.find(e);
    if (it != b.enc_time.end()) return it->second;
    Tensor v = encoder(e).w2t.forward(action_sinusoid(t, D)).reshape({D});
    return b.enc_time.emplace(e, v).first->second;
  }
};

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
  // Every key and shape from the head's table (models/gr00t_description.cc), all at once.
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
  // A device's rows / columns of a weight; the tensor itself (no copy) on one device.
  auto part = [](const Tensor& t, int d, int64_t start, int64_t len) {
    return start == 0 && len == t.dim(d) ? t : t.narrow(d, start, len);
  };
  const std::vector<int> cross = cfg.dit.cross_block_indices();
  const int64_t dl = m.heads_local * m.dh, c0 = m.rank * dl, f0 = m.rank * m.ff_local;
  for (int i = 0; i < cfg.dit.n_layers; ++i) {
    DitBlock blk;
    blk.index = i;
    blk.cross = std::find(cross.begin(), cross.end(), i) != cross.end();
    blk.key_set = blk.cross ? cfg.dit.key_set(i) : "";
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

Tensor ActionHead::get_action(const AdapterOutputs& adapter, const AdapterPlan& plan,
                              const Tensor& noise, int embodiment, int steps,
                              std::vector<Tensor>* velocities) {
  ProfileScope prof("gr00t_get_action");
  Impl& m = *impl_;
  const char* vn = version_name(m.cfg.version);
  const int64_t D = m.D, N = m.N, T = m.T, A = m.A, dl = m.heads_local * m.dh;
  const int K = steps > 0 ? steps : m.hc.num_steps;
  MESHNN_CHECK(m.tp == 1 || m.device, vn,
               ": this head-parallel head is not bound to a device (bind_device)");
  MESHNN_CHECK(steps >= 0 && K <= m.hc.num_buckets, "steps must be in [1, ", m.hc.num_buckets,
               "] (the timestep buckets; 0 = the config's ", m.hc.num_steps, "), got ", steps);

  // ---- inputs ---------------------------------------------------------------------------------
  MESHNN_CHECK(embodiment >= 0 && embodiment < m.cfg.state.num_embodiments, "embodiment id ",
               embodiment, " is out of range [0, ", m.cfg.state.num_embodiments, ")");
  MESHNN_CHECK(noise.defined(), "noise is undefined");
  MESHNN_CHECK_AS(ShapeError,
                  (noise.rank() == 2 || (noise.rank() == 3 && noise.dim(0) == 1)) &&
                      noise.dim(-1) == A && noise.dim(-2) == T,
                  "noise must be [1, ", T, ", ", A, "] (action_horizon, action_dim), got ",
                  shape_str(noise.shape()));
  MESHNN_CHECK(all_finite(noise), "noise has NaN or Inf values");
  const Tensor& sf = adapter.state_features;
  MESHNN_CHECK(sf.defined() && sf.numel() == D, vn,
               ": the adapter outputs carry no state features (run it with a state)");
  // Cross blocks: the adapter's K/V of this device's heads, and each key set's valid rows.
  struct CrossKv {
    const float *k, *v;
    int64_t L;
    std::vector<uint8_t> valid;
  };
  std::map<int, CrossKv> ckv;
  for (const DitBlock& b : m.blocks) {
    if (!b.cross) continue;
    auto it = adapter.kv.find(b.index);
    MESHNN_CHECK(it != adapter.kv.end(), vn, ": the adapter outputs have no K/V for cross block ",
                 b.index);
    const Tensor& Kt = it->second.first;
    MESHNN_CHECK_AS(ShapeError, Kt.rank() == 4 && Kt.dim(1) == m.heads_local && Kt.dim(3) == m.dh,
                    vn, ": cross block ", b.index, " K ", shape_str(Kt.shape()), " does not hold ",
                    m.heads_local, " heads of ", m.dh, " (adapter and head on another mesh?)");
    const KeySetPlan& ks = plan.key_sets.at(b.key_set);
    CrossKv c{Kt.data<float>(), it->second.second.data<float>(), Kt.dim(2), {}};
    c.valid.assign(static_cast<size_t>(c.L), 0);
    if (ks.identity) {
      const std::vector<uint8_t> kv = plan.layout.key_valid();
      std::copy(kv.begin(), kv.begin() + std::min<int64_t>(c.L, static_cast<int64_t>(kv.size())),
                c.valid.begin());
    } else {
      std::fill(c.valid.begin(), c.valid.begin() + ks.l_real, 1);
    }
    // Undefined upstream (an all-masked softmax row): rejected here.
    MESHNN_CHECK(ks.l_real > 0, vn, ": key set '", b.key_set, "' of cross block ", b.index,
                 " has no tokens (no ", b.key_set, " tokens in --token-types)");
    ckv.emplace(b.index, std::move(c));
  }
  size_t max_l = static_cast<size_t>(N);
  for (const auto& [i, c] : ckv) max_l = std::max(max_l, static_cast<size_t>(c.L));
  if (m.scores.numel() < static_cast<int64_t>(m.heads_local * N * max_l))
    m.scores = Tensor({static_cast<int64_t>(m.heads_local * N * max_l)});

  ++m.stats.get_action_calls;
  Tensor xs = noise.reshape({T, A}).to(DType::f32).clone();  // Euler state, f32
  float* xa = xs.data<float>();
  EncoderSlice& es = m.encoder(embodiment);
  Tensor a1({T, D}), a2({T, D});
  float* h = m.h.data<float>();
  float* x = m.x.data<float>();
  const int64_t r_act = 1 + m.F;  // first action row
  for (int k = 0; k < K; ++k) {
    ProfileScope prof_step("gr00t_step");
    // t_disc = int(k / K · buckets) in double, truncated (K = 4 → 0, 250, 500, 750).
    const int t = static_cast<int>(static_cast<double>(k) / K * m.hc.num_buckets);
    Bucket& bk = m.bucket(t);
    // ---- action encoder: swish(a1·W2[:D] + τ·W2[D:] + b2)·W3 + b3, + position rows --------
    es.w1.forward_rows(xa, T, A, a1.data<float>(), D);
    es.w2a.forward_rows(a1.data<float>(), T, D, a2.data<float>(), D);
    const float* tt = m.enc_time(bk, t, embodiment).data<float>();
    float* a2d = a2.data<float>();
    for (int64_t r = 0; r < T; ++r)
      for (int64_t c = 0; c < D; ++c) {
        const float z = a2d[r * D + c] + tt[c];
        a2d[r * D + c] = z / (1.f + std::exp(-z));
      }
    es.w3.forward_rows(a2d, T, D, h + r_act * D, D);
    const float* pos = m.pos.data<float>();
    for (int64_t i = 0; i < T * D; ++i) h[r_act * D + i] += pos[i];
    std::memcpy(h, sf.to(DType::f32).data<float>(), sizeof(float) * D);
    if (m.F) std::memcpy(h + D, m.future.data<float>(), sizeof(float) * m.F * D);

    // ---- DiT ------------------------------------------------------------------------------
    for (size_t bi = 0; bi < m.blocks.size(); ++bi) {
      DitBlock& b = m.blocks[bi];
      const float* scale = bk.mod[bi].data<float>();
      ln_modulate(m.ln5, h, N, D, scale, scale + D, x);
      b.q.forward_rows(x, N, D, m.qb.data<float>(), dl);
      ++m.stats.q_projections;
      if (b.cross) {
        const CrossKv& c = ckv.at(b.index);
        const AttnView view{c.k, c.L * m.dh, m.dh, c.v, c.L * m.dh, m.dh};
        attend(m.qb.data<float>(), dl, view, m.att.data<float>(), dl, N, c.L, m.heads_local, m.dh,
               m.scale, c.valid.data(), m.scores.data<float>());
      } else {
        b.kv.forward_rows(x, N, D, m.kvb.data<float>(), 2 * dl);
        ++m.stats.self_kv_projections;
        const float* kvp = m.kvb.data<float>();
        const AttnView view{kvp, m.dh, 2 * dl, kvp + dl, m.dh, 2 * dl};
        attend(m.qb.data<float>(), dl, view, m.att.data<float>(), dl, N, N, m.heads_local, m.dh,
               m.scale, nullptr, m.scores.data<float>());
      }
      b.out.forward_rows(m.att.data<float>(), N, dl, m.part.data<float>(), D);
      m.reduce_add(m.part, N, h, b.bo.data<float>());
      // The last block's FF and everything after it are row-wise: only the action rows matter.
      const int64_t r0 = bi + 1 == m.blocks.size() ? N - T : 0, M = N - r0;
      m.ln5.forward_rows(h + r0 * D, M, D, x, D);
      b.ff1.forward_rows(x, M, D, m.hid.data<float>(), m.ff_local);
      b.ff2.forward_rows(m.hid.data<float>(), M, m.ff_local, m.part.data<float>(), D);
      m.reduce_add(m.part, M, h + r0 * D, b.b2.data<float>());
    }
    // ---- output head on the last T rows, decoder, Euler step ------------------------------
    const float* om = bk.out_mod.data<float>();
    ln_modulate(m.ln6, h + (N - T) * D, T, D, om + D, om, x);  // proj_out_1: shift | scale
    m.proj_out_2.forward_rows(x, T, D, m.y.data<float>(), m.O);
    const Tensor v = m.decoder.forward(m.y, embodiment);  // (T, A)
    const float* vd = v.data<float>();
    // A non-finite velocity is the model's fault (the inputs were checked finite): name the step
    // instead of returning NaN actions, or finite wrong ones later.
    for (int64_t i = 0; i < T * A; ++i)
      if (!std::isfinite(vd[i]))
        throw Error(detail::concat(
            vn, " action head: the DiT produced a non-finite velocity (", vd[i], ") at step ",
            k + 1, " of ", K, ", action row ", i / A, ", dim ", i % A,
            ": a weight of the checkpoint is non-finite or out of range (inputs were finite)"));
    const float dt = static_cast<float>(1.0 / K);
    for (int64_t i = 0; i < T * A; ++i) xa[i] += dt * vd[i];
    if (velocities) velocities->push_back(v.clone().reshape({1, T, A}));
    ++m.stats.steps;
  }
  return xs.reshape({1, T, A});
}

// ------------------------------------------------------------------------------------------------
// noise, policy
// ------------------------------------------------------------------------------------------------

Tensor seeded_noise(int64_t horizon, int64_t action_dim, uint64_t seed) {
  // Box–Muller over mt19937_64 (the same numbers on every standard library, unlike
  // std::normal_distribution).
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  Tensor n({1, horizon, action_dim});
  float* d = n.data<float>();
  for (int64_t i = 0; i < n.numel(); i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform())), a = 2.0 * M_PI * uniform();
    d[i] = static_cast<float>(r * std::cos(a));
    if (i + 1 < n.numel()) d[i + 1] = static_cast<float>(r * std::sin(a));
  }
  return n;
}

// make_random_head_checkpoint: models/gr00t_description.cc (from the key table).

struct PolicyRunner::State {
  Config cfg;
  ActionHeadConfig hc;
  SlotLayout layout;
  std::unique_ptr<VlAdapter> adapter;
  std::unique_ptr<ActionHead> head;
};

PolicyRunner::PolicyRunner(const Config& cfg, const ActionHeadConfig& hc, const SlotLayout& layout,
                           const WeightLookup& weights, const PolicyOptions& options,
                           const std::string& prefix, Device* device)
    : s_(std::make_unique<State>()) {
  s_->cfg = cfg;
  s_->hc = hc;
  s_->layout = layout;
  ActionHeadOptions ho = options.head;
  ho.mesh_axis = options.adapter.mesh_axis;
  // Head first: its key check lists every missing tensor of the head at once.
  s_->head = std::make_unique<ActionHead>(cfg, hc, weights, ho, prefix, device);
  s_->adapter = std::make_unique<VlAdapter>(cfg, layout, weights, options.adapter, prefix, device);
}

PolicyRunner::~PolicyRunner() = default;
VlAdapter& PolicyRunner::adapter() { return *s_->adapter; }
ActionHead& PolicyRunner::head() { return *s_->head; }
std::unique_ptr<PolicyRunner> PolicyRunner::fork() const {
  std::unique_ptr<PolicyRunner> out(new PolicyRunner());
  out->s_ = std::make_unique<State>();
  State& f = *out->s_;
  f.cfg = s_->cfg;
  f.hc = s_->hc;
  f.layout = s_->layout;
  f.head = s_->head->fork();
  f.adapter = s_->adapter->fork();
  return out;
}

int64_t PolicyRunner::adapter_hoist_projections() const { return s_->adapter->hoist_projections(); }

void PolicyRunner::bind_device(Device* device) {
  s_->head->bind_device(device);
  s_->adapter->bind_device(device);
}

Tensor PolicyRunner::get_action(const Tensor& features, const Tensor& state, int embodiment,
                                const Tensor& noise, uint64_t seed, int steps,
                                std::vector<Tensor>* velocities) {
  return get_action(features, Tensor(), state, embodiment, noise, seed, steps, velocities);
}

Tensor PolicyRunner::get_action(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                                int embodiment, const Tensor& noise, uint64_t seed, int steps,
                                std::vector<Tensor>* velocities) {
  State& s = *s_;
  const char* vn = version_name(s.cfg.version);
  // ---- validate everything before any compute -----------------------------------------------
  MESHNN_CHECK(features.defined(), "features are undefined");
  const int64_t D = s.cfg.backbone_embedding_dim;
  MESHNN_CHECK_AS(ShapeError, features.dim(-1) == D, vn, ": features have width ", features.dim(-1),
                  ", the checkpoint's backbone_embedding_dim is ", D);
  Tensor f = features;
  if (f.rank() != 4) {
    MESHNN_CHECK_AS(ShapeError, f.rank() >= 2 && f.dim(-2) == s.layout.seq_len(), "features ",
                    shape_str(f.shape()), " must be [1, S, ", D, "] with S = ", s.layout.seq_len(),
                    " (the token-types length)");
    f = s.layout.rows_to_slots(f.to(DType::f32));
  }
  MESHNN_CHECK(all_finite(f), "features have NaN or Inf values");
  MESHNN_CHECK(state.defined(), vn, ": the action head needs a state");
  MESHNN_CHECK(embodiment >= 0 && embodiment < s.cfg.state.num_embodiments, "embodiment id ",
               embodiment, " is out of range [0, ", s.cfg.state.num_embodiments, ")");
  // The state encoder reads max_state_dim columns; wider states would be silently cut.
  MESHNN_CHECK(state.rank() >= 1 && state.dim(-1) <= s.cfg.state.max_state_dim, vn,
               ": state width ", state.rank() ? state.dim(-1) : 0, " exceeds max_state_dim ",
               s.cfg.state.max_state_dim, " (the padded state of this checkpoint)");
  Tensor nz = noise.defined() ? noise : seeded_noise(s.hc.action_horizon, s.hc.action_dim, seed);
  MESHNN_CHECK_AS(ShapeError,
                  (nz.rank() == 2 || (nz.rank() == 3 && nz.dim(0) == 1)) &&
                      nz.dim(-2) == s.hc.action_horizon && nz.dim(-1) == s.hc.action_dim,
                  "noise must be [1, ", s.hc.action_horizon, ", ", s.hc.action_dim, "], got ",
                  shape_str(nz.shape()));
  MESHNN_CHECK(all_finite(nz), "noise has NaN or Inf values");
  for (const std::string& ks : {std::string("text"), std::string("image")}) {
    bool used = false;
    for (int b : s.cfg.dit.cross_block_indices()) used = used || s.cfg.dit.key_set(b) == ks;
    if (used)
      MESHNN_CHECK(s.layout.key_set_lengths(ks).first > 0, vn, ": no ", ks,
                   " tokens in the token types; the ", ks,
                   " cross-attention blocks would attend nothing");
  }
  // state: width, finiteness checked by the adapter before its compute (state_rows).
  // vl_mask: shape, 0 / 1 values and presence checked by the adapter before its compute.
  const Tensor mask = vl_mask.defined()                   ? vl_mask
                      : s.adapter->plan().vl_mask_present ? s.layout.key_valid_mask()
                                                          : Tensor();
  AdapterOutputs out = s.adapter->forward(f, mask, state, embodiment);
  Tensor actions = s.head->get_action(out, s.adapter->plan(), nz, embodiment, steps, velocities);
  s.adapter->free_outputs(out);
  return actions;
}

}  // namespace meshnn::gr00t
