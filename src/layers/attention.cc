#include "layers/attention.h"

#include <cmath>

#include "dnnl/matmul.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"
#include "ops/softmax.h"

namespace meshnn::layers {

void multi_head_attention(const AttentionArgs& a, float* scores) {
  const int64_t H = a.n_heads, Dh = a.head_dim, Sq = a.s_q, Sk = a.s_k;
  if (Sq == 0) return;
  MESHNN_CHECK_AS(ShapeError, Sk > 0 && H > 0 && Dh > 0, "attention: empty keys or heads");
  // scores[h] (Sq, Sk) = scale · q_h (Sq, Dh) · k_hᵀ (Dh, Sk), all heads in one batched matmul.
  dnnl_glue::StridedMatmul qk;
  qk.batch = H;
  qk.M = Sq;
  qk.K = Dh;
  qk.N = Sk;
  qk.src_strides[0] = Dh, qk.src_strides[1] = a.ldq, qk.src_strides[2] = 1;
  qk.wei_strides[0] = a.k_hs ? a.k_hs : Dh;
  qk.wei_strides[1] = 1, qk.wei_strides[2] = a.ldk;  // kᵀ as a view
  qk.dst_strides[0] = Sq * Sk, qk.dst_strides[1] = Sk, qk.dst_strides[2] = 1;
  qk.scale = a.scale;
  dnnl_glue::strided_matmul(qk, a.q, a.k, scores);
  {
    ProfileScope prof("softmax");
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < H * Sq; ++r) ops::softmax_row(scores + r * Sk, Sk, a.key_valid);
  }
  // out_h (Sq, Dh) = p_h (Sq, Sk) · v_h (Sk, Dh), written straight into the interleaved rows.
  dnnl_glue::StridedMatmul pv;
  pv.batch = H;
  pv.M = Sq;
  pv.K = Sk;
  pv.N = Dh;
  pv.src_strides[0] = Sq * Sk, pv.src_strides[1] = Sk, pv.src_strides[2] = 1;
  pv.wei_strides[0] = a.v_hs ? a.v_hs : Dh, pv.wei_strides[1] = a.ldv, pv.wei_strides[2] = 1;
  pv.dst_strides[0] = Dh, pv.dst_strides[1] = a.ldo, pv.dst_strides[2] = 1;
  dnnl_glue::strided_matmul(pv, scores, a.v, a.out);
}

EncoderBlock::EncoderBlock(const EncoderBlockWeights& w, int64_t n_heads, int64_t head_dim,
                           float eps, Precision precision)
    : norm1_(w.norm1_w, w.norm1_b, eps),
      norm3_(w.norm3_w, w.norm3_b, eps),
      ff_(w.ff1_w, w.ff1_b, w.ff2_w, w.ff2_b, precision),
      dim_(norm1_.dim()),
      n_heads_(n_heads),
      head_dim_(head_dim),
      scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)))) {
  MESHNN_CHECK_AS(ShapeError, n_heads * head_dim == dim_, "EncoderBlock: ", n_heads, " heads × ",
                  head_dim, " != dim ", dim_);
  // Fuse to_q, to_k, to_v into one (3D, D) weight: one product reads the normed rows once.
  Tensor wqkv =
      concat({w.to_q_w.to(DType::f32), w.to_k_w.to(DType::f32), w.to_v_w.to(DType::f32)}, 0);
  Tensor bqkv =
      concat({w.to_q_b.to(DType::f32), w.to_k_b.to(DType::f32), w.to_v_b.to(DType::f32)}, 0);
  qkv_ = Linear::from_out_in(wqkv, bqkv, Activation::none, precision);
  out_ = Linear::from_out_in(w.to_out_w, w.to_out_b, Activation::none, precision);
  MESHNN_CHECK_AS(ShapeError,
                  qkv_.in_features() == dim_ && qkv_.out_features() == 3 * dim_ &&
                      out_.in_features() == dim_ && out_.out_features() == dim_ &&
                      ff_.dim() == dim_,
                  "EncoderBlock: projection shapes disagree with dim ", dim_);
}

void EncoderBlock::prepare(int64_t M) {
  if (M > s_.rows) {
    s_.n = Tensor::empty({M, dim_});
    s_.qkv = Tensor::empty({M, 3 * dim_});
    s_.attn = Tensor::empty({M, dim_});
    s_.scores = Tensor::empty({n_heads_, M, M});
    s_.hidden = Tensor::empty({M, ff_.hidden()});
    s_.rows = M;
  }
  qkv_.prepare(M);
  out_.prepare(M, true);
}

void EncoderBlock::forward(float* h, int64_t M, const uint8_t* key_valid) {
  prepare(M);
  float* n = s_.n.data<float>();
  float* qkv = s_.qkv.data<float>();
  float* attn = s_.attn.data<float>();
  const int64_t D = dim_;
  norm1_.forward_rows(h, M, D, n, D);
  qkv_.forward_rows(n, M, D, qkv, 3 * D);
  AttentionArgs a;
  a.q = qkv, a.ldq = 3 * D;
  a.k = qkv + D, a.ldk = 3 * D;
  a.v = qkv + 2 * D, a.ldv = 3 * D;
  a.out = attn, a.ldo = D;
  a.s_q = M, a.s_k = M;
  a.n_heads = n_heads_, a.head_dim = head_dim_;
  a.scale = scale_;
  a.key_valid = key_valid;
  multi_head_attention(a, s_.scores.data<float>());
  out_.forward_rows(attn, M, D, h, D, /*accumulate=*/true);  // h = h + to_out(attn)
  norm3_.forward_rows(h, M, D, n, D);
  ff_.forward_rows(n, M, D, h, D, /*accumulate=*/true, s_.hidden.data<float>());  // h = h + ff
}

}  // namespace meshnn::layers
