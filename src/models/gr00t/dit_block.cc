// The GR00T action head's DiT: attention over strided K/V, AdaLN blocks with head-parallel
// reductions, and the output head (N1.5 DiT / N1.6-N1.7 AlternateVLDiT).
#include <cmath>

#include "layers/attention.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/action_head_impl.h"

namespace meshnn::gr00t {

namespace {

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

// part (M, D) partial sums → summed over the axis group (reduce-scatter + all-gather on the
// feature dim, so any row count works); then dst += sum + bias.
void ActionHead::Impl::reduce_add(const Tensor& p, int64_t M, float* dst, const float* bias) {
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

void ActionHead::Impl::run_dit(const Bucket& bk, const std::map<int, CrossKv>& ckv) {
  Impl& m = *this;
  const int64_t D = m.D, N = m.N, T = m.T, dl = m.heads_local * m.dh;
  float* h = m.h.data<float>();
  float* x = m.x.data<float>();
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
  // ---- output head on the last T rows ---------------------------------------------------
  const float* om = bk.out_mod.data<float>();
  ln_modulate(m.ln6, h + (N - T) * D, T, D, om + D, om, x);  // proj_out_1: shift | scale
  m.proj_out_2.forward_rows(x, T, D, m.y.data<float>(), m.O);
}

}  // namespace meshnn::gr00t
