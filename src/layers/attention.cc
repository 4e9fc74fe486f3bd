#include "layers/attention.h"

#include <algorithm>
#include <cmath>

#include "dnnl/matmul.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"
#include "ops/softmax.h"

namespace meshnn::layers {

namespace {

// a (n) · b (n) in f32 with 8 partial sums combined pairwise: the result depends only on the two
// rows, never on the threads or on how the rows reached the kernel.
float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t e = 0;
  for (; e + 8 <= n; e += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[e + l] * b[e + l];
  float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; e < n; ++e) s += a[e] * b[e];
  return s;
}

// Causal: every (query i, head h) alone over keys 0 … past + i (hidden keys skipped), the
// output accumulated in f32 in key order. q, k, v, out as in AttentionArgs.
void causal_attention(const AttentionArgs& a) {
  const int64_t H = a.n_heads, Dh = a.head_dim, Sq = a.s_q;
  const int64_t k_hs = a.k_hs ? a.k_hs : Dh, v_hs = a.v_hs ? a.v_hs : Dh;
  MESHNN_CHECK_AS(ShapeError, a.past >= 0 && a.past + Sq <= a.s_k, "causal attention: ", Sq,
                  " queries after ", a.past, " cached rows need that many keys, got ", a.s_k);
#pragma omp parallel
  {
    std::vector<float> s(static_cast<size_t>(a.s_k));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < Sq * H; ++r) {
      const int64_t i = r / H, h = r % H, keys = a.past + i + 1;
      const float* qh = a.q + i * a.ldq + h * Dh;
      for (int64_t j = 0; j < keys; ++j) {
        const bool seen = !a.key_valid || a.key_valid[j];
        s[j] = seen ? dot(qh, a.k + h * k_hs + j * a.ldk, Dh) * a.scale : 0.f;
      }
      ops::softmax_row(s.data(), keys, a.key_valid);
      float* o = a.out + i * a.ldo + h * Dh;
      std::fill(o, o + Dh, 0.f);
      for (int64_t j = 0; j < keys; ++j) {
        if (a.key_valid && !a.key_valid[j]) continue;
        const float* vh = a.v + h * v_hs + j * a.ldv;
        const float p = s[j];
        for (int64_t e = 0; e < Dh; ++e) o[e] += p * vh[e];
      }
    }
  }
}

}  // namespace

void multi_head_attention(const AttentionArgs& a, float* scores) {
  const int64_t H = a.n_heads, Dh = a.head_dim, Sq = a.s_q, Sk = a.s_k;
  if (Sq == 0) return;
  MESHNN_CHECK_AS(ShapeError, Sk > 0 && H > 0 && Dh > 0, "attention: empty keys or heads");
  if (a.causal) {
    ProfileScope prof("causal_attention");
    causal_attention(a);
    return;
  }
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

void KvCache::start(int64_t batch, int64_t width) {
  batch_ = batch;
  width_ = width;
  kv_.assign(static_cast<size_t>(batch), {});
}

void KvCache::clear() {
  kv_.clear();
  batch_ = -1;
}

int64_t KvCache::rows(int64_t b) const {
  return static_cast<int64_t>(kv_.at(static_cast<size_t>(b)).size()) / (2 * width_);
}

void KvCache::append(int64_t b, const float* k, const float* v, int64_t ld, int64_t n) {
  std::vector<float>& kv = kv_.at(static_cast<size_t>(b));
  const int64_t r0 = rows(b), W = width_;
  kv.resize(static_cast<size_t>((r0 + n) * 2 * W));
  for (int64_t i = 0; i < n; ++i) {
    std::copy(k + i * ld, k + i * ld + W, kv.data() + (r0 + i) * 2 * W);
    std::copy(v + i * ld, v + i * ld + W, kv.data() + (r0 + i) * 2 * W + W);
  }
}

void KvCache::bind(int64_t b, AttentionArgs& a) const {
  const std::vector<float>& kv = kv_.at(static_cast<size_t>(b));
  a.k = kv.data(), a.ldk = 2 * width_, a.k_hs = 0;
  a.v = kv.data() + width_, a.ldv = 2 * width_, a.v_hs = 0;
  a.s_k = rows(b);
}

Tensor KvCache::to_tensor() const {
  if (!started()) return Tensor();
  const int64_t R = batch_ > 0 ? rows(0) : 0;
  Tensor kv = Tensor::empty({batch_, R, 2 * width_});
  for (int64_t b = 0; b < batch_; ++b) {
    const std::vector<float>& src = kv_[static_cast<size_t>(b)];
    MESHNN_CHECK_AS(ShapeError, rows(b) == R, "K/V cache: item ", b, " holds ", rows(b),
                    " rows, item 0 ", R);
    std::copy(src.begin(), src.end(), kv.data<float>() + b * R * 2 * width_);
  }
  return kv;
}

void KvCache::from_tensor(const Tensor& kv, int64_t width) {
  if (!kv.defined()) return clear();
  const Tensor& c = kv;
  MESHNN_CHECK_AS(ShapeError, c.rank() == 3 && c.dim(2) == 2 * width,
                  "K/V cache: expected (B, rows, ", 2 * width, "), got ", shape_str(c.shape()));
  start(c.dim(0), width);
  const int64_t R = c.dim(1);
  for (int64_t b = 0; b < batch_; ++b) {
    const float* p = c.data<float>() + b * R * 2 * width;
    kv_[static_cast<size_t>(b)].assign(p, p + R * 2 * width);
  }
}

}  // namespace meshnn::layers
