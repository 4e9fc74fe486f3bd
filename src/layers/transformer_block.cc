#include "layers/transformer_block.h"

#include <cmath>
#include <cstring>

#include "layers/attention.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"

namespace meshnn::layers {

namespace {

// Rows [r0, r0 + n) of an (N, …) weight, as f32.
Tensor rows_f32(const Tensor& t, int64_t r0, int64_t n) {
  return t.narrow(0, r0, n).to(DType::f32);
}

}  // namespace

TransformerBlock::TransformerBlock(const TransformerBlockWeights& w, int64_t n_heads,
                                   int64_t head_dim, float eps, Precision precision,
                                   const TensorParallel& tp)
    : norm1_(w.norm1_w, w.norm1_b, eps),
      norm3_(w.norm3_w, w.norm3_b, eps),
      tp_(tp),
      dim_(norm1_.dim()),
      n_heads_(n_heads / tp.size),
      head_dim_(head_dim),
      scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)))) {
  MESHNN_CHECK_AS(ShapeError, n_heads * head_dim == dim_, "TransformerBlock: ", n_heads,
                  " heads × ", head_dim, " != dim ", dim_);
  MESHNN_CHECK_AS(ShapeError,
                  tp.size >= 1 && tp.rank >= 0 && tp.rank < tp.size && n_heads % tp.size == 0 &&
                      w.ff1_w.dim(0) % tp.size == 0,
                  "TransformerBlock: ", n_heads, " heads and ", w.ff1_w.dim(0),
                  " hidden features do not split over ", tp.size, " devices (rank ", tp.rank, ")");
  // Fuse to_q, to_k, to_v (this member's heads) into one weight: one product reads the normed
  // rows once.
  const int64_t dl = n_heads_ * head_dim, c0 = tp.rank * dl;
  Tensor wqkv = concat(
      {rows_f32(w.to_q_w, c0, dl), rows_f32(w.to_k_w, c0, dl), rows_f32(w.to_v_w, c0, dl)}, 0);
  Tensor bqkv = concat(
      {rows_f32(w.to_q_b, c0, dl), rows_f32(w.to_k_b, c0, dl), rows_f32(w.to_v_b, c0, dl)}, 0);
  qkv_ = Linear::from_out_in(wqkv, bqkv, Activation::none, precision);
  const int64_t fl = w.ff1_w.dim(0) / tp.size, f0 = tp.rank * fl;
  if (tp.size == 1) {
    // Whole: the output and ff2 biases are fused into their products.
    out_ = Linear::from_out_in(w.to_out_w, w.to_out_b, Activation::none, precision);
    ff_ = FeedForward(w.ff1_w, w.ff1_b, w.ff2_w, w.ff2_b, precision);
  } else {
    // A member's partial products are summed over the group first: their biases come after.
    out_ = Linear::from_out_in(w.to_out_w.narrow(1, c0, dl), Tensor(), Activation::none, precision);
    ff_ = FeedForward(w.ff1_w.narrow(0, f0, fl), w.ff1_b.narrow(0, f0, fl),
                      w.ff2_w.narrow(1, f0, fl), Tensor(), precision);
    bo_ = w.to_out_b.to(DType::f32);
    b2_ = w.ff2_b.to(DType::f32);
  }
  MESHNN_CHECK_AS(ShapeError,
                  qkv_.in_features() == dim_ && qkv_.out_features() == 3 * dl &&
                      out_.in_features() == dl && out_.out_features() == dim_ && ff_.dim() == dim_,
                  "TransformerBlock: projection shapes disagree with dim ", dim_);
}

void TransformerBlock::prepare(int64_t M) {
  const int64_t dl = n_heads_ * head_dim_;
  if (M > s_.rows) {
    s_.n = Tensor::empty({M, dim_});
    s_.qkv = Tensor::empty({M, 3 * dl});
    s_.attn = Tensor::empty({M, dl});
    s_.scores = Tensor::empty({n_heads_, M, M});
    s_.hidden = Tensor::empty({M, ff_.hidden()});
    s_.rows = M;
  }
  qkv_.prepare(M);
  out_.prepare(M, tp_.size == 1);
}

void TransformerBlock::attend(const float* h, int64_t M, const uint8_t* key_valid) {
  const int64_t D = dim_, dl = n_heads_ * head_dim_;
  float* qkv = s_.qkv.data<float>();
  norm1_.forward_rows(h, M, D, s_.n.data<float>(), D);
  qkv_.forward_rows(s_.n.data<float>(), M, D, qkv, 3 * dl);
  AttentionArgs a;
  a.q = qkv, a.ldq = 3 * dl;
  a.k = qkv + dl, a.ldk = 3 * dl;
  a.v = qkv + 2 * dl, a.ldv = 3 * dl;
  a.out = s_.attn.data<float>(), a.ldo = dl;
  a.s_q = M, a.s_k = M;
  a.n_heads = n_heads_, a.head_dim = head_dim_;
  a.scale = scale_;
  a.key_valid = key_valid;
  multi_head_attention(a, s_.scores.data<float>());
}

void TransformerBlock::forward(float* h, int64_t M, const uint8_t* key_valid, CclManager* ccl) {
  prepare(M);
  attend(h, M, key_valid);
  if (tp_.size > 1) {
    MESHNN_CHECK(ccl, "TransformerBlock: a tensor-parallel member needs its group's collectives");
    forward_split(h, M, *ccl);
    return;
  }
  const int64_t D = dim_;
  float* n = s_.n.data<float>();
  out_.forward_rows(s_.attn.data<float>(), M, D, h, D, /*accumulate=*/true);  // h += to_out(attn)
  norm3_.forward_rows(h, M, D, n, D);
  ff_.forward_rows(n, M, D, h, D, /*accumulate=*/true, s_.hidden.data<float>());  // h += ff
}

void TransformerBlock::forward_split(float* h, int64_t M, CclManager& ccl) {
  const int64_t D = dim_, dl = n_heads_ * head_dim_, ms = M / tp_.size;
  MESHNN_CHECK_AS(ShapeError, ms * tp_.size == M, "TransformerBlock: ", M,
                  " rows do not split over ", tp_.size, " devices");
  // (M, D) this member's partial sums: exactly M rows, the reduce-scatter takes the whole tensor
  // (narrow would copy).
  if (!s_.part.defined() || s_.part.dim(0) != M) s_.part = Tensor::empty({M, D});
  Tensor& part = s_.part;
  out_.forward_rows(s_.attn.data<float>(), M, dl, part.data<float>(), D);
  Tensor o = ccl.reduce_scatter(part, 0, tp_.axis, /*persistent=*/true);  // (M/size, D)
  Tensor hs = Tensor::empty({ms, D});
  const float* hr = h + tp_.rank * ms * D;
  const float* op = o.data<float>();
  const float* bo = bo_.data<float>();
  float* hp = hs.data<float>();
  for (int64_t r = 0; r < ms; ++r)
    for (int64_t c = 0; c < D; ++c) hp[r * D + c] = hr[r * D + c] + op[r * D + c] + bo[c];
  Tensor n3 = ccl.all_gather(norm3_.forward(hs), 0, tp_.axis, true);  // (M, D)
  ff_.forward_rows(n3.data<float>(), M, D, part.data<float>(), D, /*accumulate=*/false,
                   s_.hidden.data<float>());
  Tensor f = ccl.reduce_scatter(part, 0, tp_.axis, true);
  const float* fp = f.data<float>();
  const float* b2 = b2_.data<float>();
  for (int64_t r = 0; r < ms; ++r)
    for (int64_t c = 0; c < D; ++c) hp[r * D + c] += fp[r * D + c] + b2[c];
  Tensor full = ccl.all_gather(hs, 0, tp_.axis, true);
  std::memcpy(h, full.raw(), sizeof(float) * M * D);
}

}  // namespace meshnn::layers
