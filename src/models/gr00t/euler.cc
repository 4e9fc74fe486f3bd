// The GR00T action head's Euler flow-matching loop (ActionHead::get_action): inputs checked, the
// adapter's cross K/V taken, then per step the action encoder, the DiT and the Euler update.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"
#include "models/gr00t/action_head_impl.h"

namespace meshnn::gr00t {

using head_detail::all_finite;

std::map<int, CrossKv> ActionHead::Impl::cross_kv(const AdapterOutputs& adapter,
                                                  const AdapterPlan& plan) const {
  const Impl& m = *this;
  const char* vn = version_name(m.cfg.version);
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
  return ckv;
}

void ActionHead::Impl::fill_rows(EncoderSlice& es, Bucket& bk, int t, int embodiment,
                                 const float* xa, const Tensor& sf, Tensor& a1, Tensor& a2) {
  const int64_t D = this->D, T = this->T, A = this->A;
  float* h = this->h.data<float>();
  const int64_t r_act = 1 + F;  // first action row
  // ---- action encoder: swish(a1·W2[:D] + τ·W2[D:] + b2)·W3 + b3, + position rows --------
  es.w1.forward_rows(xa, T, A, a1.data<float>(), D);
  es.w2a.forward_rows(a1.data<float>(), T, D, a2.data<float>(), D);
  const float* tt = enc_time(bk, t, embodiment).data<float>();
  float* a2d = a2.data<float>();
  for (int64_t r = 0; r < T; ++r)
    for (int64_t c = 0; c < D; ++c) {
      const float z = a2d[r * D + c] + tt[c];
      a2d[r * D + c] = z / (1.f + std::exp(-z));
    }
  es.w3.forward_rows(a2d, T, D, h + r_act * D, D);
  const float* pos = this->pos.data<float>();
  for (int64_t i = 0; i < T * D; ++i) h[r_act * D + i] += pos[i];
  std::memcpy(h, sf.to(DType::f32).data<float>(), sizeof(float) * D);
  if (F) std::memcpy(h + D, future.data<float>(), sizeof(float) * F * D);
}

Tensor ActionHead::get_action(const AdapterOutputs& adapter, const AdapterPlan& plan,
                              const Tensor& noise, int embodiment, int steps,
                              std::vector<Tensor>* velocities) {
  ProfileScope prof("gr00t_get_action");
  Impl& m = *impl_;
  const char* vn = version_name(m.cfg.version);
  const int64_t D = m.D, N = m.N, T = m.T, A = m.A;
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
  const std::map<int, CrossKv> ckv = m.cross_kv(adapter, plan);
  size_t max_l = static_cast<size_t>(N);
  for (const auto& [i, c] : ckv) max_l = std::max(max_l, static_cast<size_t>(c.L));
  if (m.scores.numel() < static_cast<int64_t>(m.heads_local * N * max_l))
    m.scores = Tensor({static_cast<int64_t>(m.heads_local * N * max_l)});

  ++m.stats.get_action_calls;
  Tensor xs = noise.reshape({T, A}).to(DType::f32).clone();  // Euler state, f32
  float* xa = xs.data<float>();
  EncoderSlice& es = m.encoder(embodiment);
  Tensor a1({T, D}), a2({T, D});
  for (int k = 0; k < K; ++k) {
    ProfileScope prof_step("gr00t_step");
    // t_disc = int(k / K · buckets) in double, truncated (K = 4 → 0, 250, 500, 750).
    const int t = static_cast<int>(static_cast<double>(k) / K * m.hc.num_buckets);
    Bucket& bk = m.bucket(t);
    m.fill_rows(es, bk, t, embodiment, xa, sf, a1, a2);
    m.run_dit(bk, ckv);
    // ---- decoder, Euler step --------------------------------------------------------------
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

}  // namespace meshnn::gr00t
