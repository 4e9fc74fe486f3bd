#include "models/minimax_h3/attention.h"

#include <algorithm>
#include <cmath>

#include "meshnn/core/error.h"
#include "meshnn/layers/state_dict.h"
#include "models/minimax_h3/weights.h"
#include "ops/softmax.h"

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

void CausalAttentionProjection::prime(const Tensor& past) {
  const int64_t B = past.dim(0), n = past.dim(1);
  if (batch_ < 0) {
    batch_ = B;
    kv_.assign(B, {});
  }
  const Tensor qkv = qkv_.forward(norm1_.forward(past));  // (B, n, 3D)
  for (int64_t b = 0; b < B; ++b) {
    std::vector<float>& kv = kv_[b];
    kv.resize(static_cast<size_t>((past_ + n) * 2 * D_));
    const float* src = qkv.data<float>() + b * n * 3 * D_;
    for (int64_t i = 0; i < n; ++i)
      std::copy(src + i * 3 * D_ + D_, src + (i + 1) * 3 * D_, kv.data() + (past_ + i) * 2 * D_);
  }
  past_ += n;
}

void CausalAttentionProjection::save_state(graph::StreamState& s) const {
  Tensor kv;
  if (batch_ >= 0) {
    kv = Tensor::empty({batch_, past_, 2 * D_});
    for (int64_t b = 0; b < batch_; ++b)
      std::copy(kv_[b].begin(), kv_[b].end(), kv.data<float>() + b * past_ * 2 * D_);
  }
  s.tensors.push_back(kv);
  s.counters.push_back(past_);
}

void CausalAttentionProjection::load_state(graph::StateReader& r) {
  Tensor kv = r.tensor();
  if (kv.defined()) kv = kv.clone();  // contiguous
  past_ = r.counter();
  batch_ = kv.defined() ? kv.dim(0) : -1;
  kv_.assign(std::max<int64_t>(batch_, 0), {});
  for (int64_t b = 0; b < batch_; ++b) {
    const float* p = kv.data<float>() + b * past_ * 2 * D_;
    kv_[b].assign(p, p + past_ * 2 * D_);
  }
}

void CausalAttentionProjection::reset() {
  kv_.clear();
  past_ = 0;
  batch_ = -1;
}

Tensor CausalAttentionProjection::flush() {
  const int64_t B = batch_;
  reset();
  return B < 0 ? Tensor() : Tensor::empty({B, 0, C_});
}

void CausalAttentionProjection::attend(int64_t b, const float* qkv, int64_t n, float* pooled) {
  std::vector<float>& kv = kv_[b];
  const int64_t P = past_;
  kv.resize(static_cast<size_t>((P + n) * 2 * D_));
  for (int64_t i = 0; i < n; ++i) {
    std::copy(qkv + i * 3 * D_ + D_, qkv + i * 3 * D_ + 3 * D_, kv.data() + (P + i) * 2 * D_);
  }
  const float scale = 1.f / std::sqrt(static_cast<float>(hd_));
  std::vector<float> scores(P + n), mean(hd_), o(hd_);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t keys = P + i + 1;  // causal: query P + i sees keys 0 … P + i
    const float* q = qkv + i * 3 * D_;
    std::fill(mean.begin(), mean.end(), 0.f);
    for (int64_t h = 0; h < H_; ++h) {
      const float* qh = q + h * hd_;
      for (int64_t j = 0; j < keys; ++j) {
        const float* kh = kv.data() + j * 2 * D_ + h * hd_;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t e = 0;
        for (; e + 8 <= hd_; e += 8)
          for (int l = 0; l < 8; ++l) acc[l] += qh[e + l] * kh[e + l];
        float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; e < hd_; ++e) s += qh[e] * kh[e];
        scores[j] = s * scale;
      }
      ops::softmax_row(scores.data(), keys);
      std::fill(o.begin(), o.end(), 0.f);
      for (int64_t j = 0; j < keys; ++j) {
        const float* vh = kv.data() + j * 2 * D_ + D_ + h * hd_;
        const float p = scores[j];
        for (int64_t e = 0; e < hd_; ++e) o[e] += p * vh[e];
      }
      for (int64_t e = 0; e < hd_; ++e) mean[e] += o[e];
    }
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
  if (batch_ < 0) {
    batch_ = B;
    kv_.assign(B, {});
  }
  MESHNN_CHECK_AS(ShapeError, B == batch_, "pre_block: batch changed from ", batch_, " to ", B,
                  " within a stream");
  if (n == 0) return Tensor::empty({B, 0, C_});
  const Tensor x = in.clone();                   // contiguous
  Tensor qkv = qkv_.forward(norm1_.forward(x));  // (B, n, 3D)
  Tensor pooled = Tensor::empty({B, n, C_});
  for (int64_t b = 0; b < B; ++b)
    attend(b, qkv.data<float>() + b * n * 3 * D_, n, pooled.data<float>() + b * n * C_);
  past_ += n;
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
