#include "models/minimax_h3/attention.h"

#include <algorithm>
#include <cmath>

#include "meshnn/core/error.h"
#include "meshnn/layers/state_dict.h"
#include "models/minimax_h3/weights.h"

namespace meshnn::models::minimax_h3 {

namespace {

Tensor get(const std::map<std::string, Tensor>& state, const std::string& key) {
  auto it = state.find(key);
  MESHNN_CHECK_AS(WeightError, it != state.end(), "missing checkpoint key '", keys::pre_block(),
                  key, "'");
  return it->second.dtype() == DType::f32 ? it->second : it->second.to(DType::f32);
}

layers::LayerNorm norm(const std::map<std::string, Tensor>& state, const std::string& p) {
  return layers::LayerNorm(get(state, weight_key(p)), get(state, bias_key(p)), 1e-5f);
}

layers::Linear linear(const std::map<std::string, Tensor>& state, const std::string& p,
                      Precision precision, layers::Activation act = layers::Activation::none) {
  return layers::Linear::from_out_in(get(state, weight_key(p)), get(state, bias_key(p)), act,
                                     precision);
}

}  // namespace

CausalAttentionProjection::CausalAttentionProjection(const std::map<std::string, Tensor>& state,
                                                     int64_t latent_dim, int64_t heads,
                                                     int64_t latent_channels, Precision precision)
    : D_(latent_dim), H_(heads), C_(latent_channels), hd_(latent_dim / heads) {
  norm1_ = norm(state, keys::norm1());
  norm3_ = norm(state, keys::norm3());
  norm2_ = norm(state, keys::norm2());
  mlp_norm_ = norm(state, keys::mlp_norm());
  // The fused qkv has no bias of its own: its bias is [q_bias ; zero_k_bias ; v_bias].
  const Tensor bias = concat(
      {get(state, keys::q_bias()), get(state, keys::zero_k_bias()), get(state, keys::v_bias())}, 0);
  qkv_ = layers::Linear::from_out_in(get(state, weight_key(keys::qkv())), bias,
                                     layers::Activation::none, precision);
  attn_proj_ = linear(state, keys::attn_proj(), precision);
  proj_ = linear(state, keys::proj(), precision);
  w0_ = linear(state, keys::mlp_w(0), precision, layers::Activation::gelu_tanh);
  w1_ = linear(state, keys::mlp_w(1), precision);
  w2_ = linear(state, keys::mlp_w(2), precision);
}

graph::NodePtr CausalAttentionProjection::fork() const {
  auto op = std::unique_ptr<CausalAttentionProjection>(new CausalAttentionProjection(*this));
  op->reset();
  return op;
}

Tensor CausalAttentionProjection::run(const Tensor& x, const TimeShard& ts, int64_t real) {
  reset();
  if (!ts.sharded() && x.dim(1) == real) {
    Tensor y = push(x);
    reset();
    return y;
  }
  // Time-sharded: the queries of this shard read the keys of every earlier row, so the shards
  // are gathered (latent rows, (B, T, D): small next to the encoder's activations) and the
  // cache is filled with the keys and values of rows [0, r0) before this shard's rows go
  // through the node as one push: each row sees exactly the keys it sees on one device.
  const int64_t B = x.dim(0), S = x.dim(1), r0 = ts.row0(S);
  const Tensor full = ts.gather(x, real);  // (B, real, D) on every device of the line
  const int64_t own = std::clamp<int64_t>(real - r0, 0, S);
  Tensor y = Tensor({B, S, C_});  // the padded tail rows stay zero
  if (own > 0) {
    if (r0 > 0) prime(full.narrow(1, 0, r0));
    const Tensor mine = push(full.narrow(1, r0, own));  // (B, own, C)
    y = own == S ? mine : concat({mine, Tensor({B, S - own, C_})}, 1);
  }
  reset();
  return y;
}

void CausalAttentionProjection::start(int64_t B) {
  if (!cache_.started()) cache_.start(B, D_);
  MESHNN_CHECK_AS(ShapeError, B == cache_.batch(), "pre_block: batch changed from ", cache_.batch(),
                  " to ", B, " within a stream");
}

void CausalAttentionProjection::prime(const Tensor& past) {
  const int64_t B = past.dim(0), n = past.dim(1);
  start(B);
  const Tensor qkv = qkv_.forward(norm1_.forward(past));  // (B, n, 3D)
  for (int64_t b = 0; b < B; ++b) {
    const float* src = qkv.data<float>() + b * n * 3 * D_;
    cache_.append(b, src + D_, src + 2 * D_, 3 * D_, n);
  }
}

void CausalAttentionProjection::save_state(graph::StreamState& s) const {
  s.tensors.push_back(cache_.to_tensor());
  s.counters.push_back(cache_.started() ? cache_.rows(0) : 0);
}

void CausalAttentionProjection::load_state(graph::StateReader& r) {
  const Tensor kv = r.tensor();
  r.counter();  // the rows cached: kv's dim 1
  cache_.from_tensor(kv, D_);
}

void CausalAttentionProjection::reset() { cache_.clear(); }

Tensor CausalAttentionProjection::flush() {
  const int64_t B = cache_.batch();
  reset();
  return B < 0 ? Tensor() : Tensor::empty({B, 0, C_});
}

void CausalAttentionProjection::attend(int64_t b, const float* qkv, int64_t n, float* pooled) {
  layers::AttentionArgs a;
  a.past = cache_.rows(b);
  cache_.append(b, qkv + D_, qkv + 2 * D_, 3 * D_, n);
  cache_.bind(b, a);
  std::vector<float> o(static_cast<size_t>(n * D_));  // (n, H·hd) the heads' outputs
  a.q = qkv, a.ldq = 3 * D_;
  a.out = o.data(), a.ldo = D_;
  a.s_q = n, a.n_heads = H_, a.head_dim = hd_;
  a.scale = 1.f / std::sqrt(static_cast<float>(hd_));
  a.causal = true;  // query past + i sees keys 0 … past + i
  layers::multi_head_attention(a, nullptr);
  std::vector<float> mean(hd_);
  for (int64_t i = 0; i < n; ++i) {
    std::fill(mean.begin(), mean.end(), 0.f);
    for (int64_t h = 0; h < H_; ++h)
      for (int64_t e = 0; e < hd_; ++e) mean[e] += o[i * D_ + h * hd_ + e];
    // Heads averaged, then the adaptive average pool hd → C over features: bin c averages
    // [⌊c·hd/C⌋, ⌈(c + 1)·hd/C⌉).
    for (int64_t c = 0; c < C_; ++c) {
      const int64_t lo = c * hd_ / C_, hi = ((c + 1) * hd_ + C_ - 1) / C_;
      float s = 0.f;
      for (int64_t e = lo; e < hi; ++e) s += mean[e] / static_cast<float>(H_);
      pooled[i * C_ + c] = s / static_cast<float>(hi - lo);
    }
  }
}

Tensor CausalAttentionProjection::push(const Tensor& in) {
  if (!in.defined()) return Tensor();
  MESHNN_CHECK_AS(ShapeError, in.rank() == 3 && in.dim(2) == D_ && in.dtype() == DType::f32,
                  "pre_block: expected rows (B, n, ", D_, ") f32, got ", shape_str(in.shape()));
  const int64_t B = in.dim(0), n = in.dim(1);
  start(B);
  if (n == 0) return Tensor::empty({B, 0, C_});
  const Tensor x = in.clone();                   // contiguous
  Tensor qkv = qkv_.forward(norm1_.forward(x));  // (B, n, 3D)
  Tensor pooled = Tensor::empty({B, n, C_});
  for (int64_t b = 0; b < B; ++b)
    attend(b, qkv.data<float>() + b * n * 3 * D_, n, pooled.data<float>() + b * n * C_);
  Tensor y = proj_.forward(norm3_.forward(x));  // (B, n, C)
  const Tensor a = attn_proj_.forward(pooled);
  float* yp = y.data<float>();
  const float* ap = a.data<float>();
  for (int64_t e = 0; e < y.numel(); ++e) yp[e] += ap[e];
  const Tensor g = mlp_norm_.forward(norm2_.forward(y));
  Tensor u = w0_.forward(g);  // gelu_tanh fused
  const Tensor v = w1_.forward(g);
  float* up = u.data<float>();
  const float* vp = v.data<float>();
  for (int64_t e = 0; e < u.numel(); ++e) up[e] *= vp[e];
  const Tensor m = w2_.forward(u);
  const float* mp = m.data<float>();
  for (int64_t e = 0; e < y.numel(); ++e) yp[e] += mp[e];
  return y;
}

}  // namespace meshnn::models::minimax_h3
