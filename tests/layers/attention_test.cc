// Multi-head attention (strided oneDNN matmuls + masked softmax) and the VL-SA encoder block
// against float64 references.
#include "layers/attention.h"

#include <gtest/gtest.h>

#include "layers/gr00t_layers_ref.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

TEST(Gr00tAttention, MultiHeadWithKeyMaskMatchesFloat64) {
  const int64_t S = 45, H = 4, Dh = 16, D = H * Dh, ld = 3 * D;
  Tensor qkv = random_normal({S, ld}, 21);
  std::vector<uint8_t> kv(S, 1);
  for (int64_t j : {3, 17, 40, 41, 42, 43, 44}) kv[j] = 0;
  Tensor out = Tensor::empty({S, D});
  std::vector<float> scores(static_cast<size_t>(H * S * S));
  layers::AttentionArgs a;
  const float* p = qkv.data<float>();
  a.q = p, a.ldq = ld, a.k = p + D, a.ldk = ld, a.v = p + 2 * D, a.ldv = ld;
  a.out = out.data<float>(), a.ldo = D, a.s_q = S, a.s_k = S, a.n_heads = H, a.head_dim = Dh;
  a.scale = 0.25f, a.key_valid = kv.data();
  layers::multi_head_attention(a, scores.data());
  // Reference on de-interleaved q, k, v.
  std::vector<double> q(S * D), k(S * D), v(S * D);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t i = 0; i < D; ++i) {
      q[s * D + i] = p[s * ld + i];
      k[s * D + i] = p[s * ld + D + i];
      v[s * D + i] = p[s * ld + 2 * D + i];
    }
  const Tensor want = ref::to_tensor(ref::attention(q, k, v, S, S, H, Dh, 0.25, kv), {S, D});
  EXPECT_TRUE(close_rel_l2(out, want, 1e-6));
}

TEST(Gr00tAttention, HeadMajorKeysAndValuesMatchFloat64) {
  // The action head's cross K/V layout: key l of head h at base + h·L·Dh + l·Dh (k_hs, v_hs).
  const int64_t Sq = 11, Sk = 29, H = 3, Dh = 8, D = H * Dh;
  Tensor q = random_normal({Sq, D}, 41), k = random_normal({H, Sk, Dh}, 42),
         v = random_normal({H, Sk, Dh}, 43);
  std::vector<uint8_t> kv(Sk, 1);
  for (int64_t j : {0, 5, 27, 28}) kv[j] = 0;
  Tensor out = Tensor::empty({Sq, D});
  std::vector<float> scores(static_cast<size_t>(H * Sq * Sk));
  layers::AttentionArgs a;
  a.q = q.data<float>(), a.ldq = D;
  a.k = k.data<float>(), a.k_hs = Sk * Dh, a.ldk = Dh;
  a.v = v.data<float>(), a.v_hs = Sk * Dh, a.ldv = Dh;
  a.out = out.data<float>(), a.ldo = D, a.s_q = Sq, a.s_k = Sk, a.n_heads = H, a.head_dim = Dh;
  a.scale = 0.3f, a.key_valid = kv.data();
  layers::multi_head_attention(a, scores.data());
  // Reference on the interleaved (S, H·Dh) layout.
  std::vector<double> kd(Sk * D), vd(Sk * D);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t l = 0; l < Sk; ++l)
      for (int64_t c = 0; c < Dh; ++c) {
        kd[l * D + h * Dh + c] = k.data<float>()[(h * Sk + l) * Dh + c];
        vd[l * D + h * Dh + c] = v.data<float>()[(h * Sk + l) * Dh + c];
      }
  const Tensor want =
      ref::to_tensor(ref::attention(ref::f64(q), kd, vd, Sq, Sk, H, Dh, 0.3, kv), {Sq, D});
  EXPECT_TRUE(close_rel_l2(out, want, 1e-6));
}

TEST(Gr00tAttention, FullyMaskedRowIsZero) {
  // A query none of whose keys is valid gets a zero output row (ops::softmax_row's rule).
  const int64_t S = 5, H = 2, Dh = 8, D = H * Dh;
  Tensor q = random_normal({S, D}, 31), k = random_normal({S, D}, 32),
         v = random_normal({S, D}, 33);
  std::vector<uint8_t> none(S, 0);
  Tensor out = random_normal({S, D}, 34);
  std::vector<float> scores(static_cast<size_t>(H * S * S));
  layers::AttentionArgs a;
  a.q = q.data<float>(), a.ldq = D, a.k = k.data<float>(), a.ldk = D, a.v = v.data<float>();
  a.ldv = D, a.out = out.data<float>(), a.ldo = D, a.s_q = S, a.s_k = S, a.n_heads = H;
  a.head_dim = Dh, a.key_valid = none.data();
  layers::multi_head_attention(a, scores.data());
  for (int64_t i = 0; i < S * D; ++i) EXPECT_EQ(out.data<float>()[i], 0.f) << i;
}

TEST(Gr00tAttention, EncoderBlockMatchesFloat64) {
  const int64_t S = 37, H = 3, Dh = 16, D = H * Dh, F = 4 * D;
  layers::EncoderBlockWeights w;
  uint64_t seed = 100;
  auto lin = [&](int64_t o, int64_t i) {
    return random_uniform({o, i}, seed++, -1.f / std::sqrt(float(i)), 1.f / std::sqrt(float(i)));
  };
  auto vec = [&](int64_t n, float lo, float hi) { return random_uniform({n}, seed++, lo, hi); };
  w.norm1_w = vec(D, 0.8f, 1.2f), w.norm1_b = vec(D, -0.1f, 0.1f);
  w.to_q_w = lin(D, D), w.to_q_b = vec(D, -0.02f, 0.02f);
  w.to_k_w = lin(D, D), w.to_k_b = vec(D, -0.02f, 0.02f);
  w.to_v_w = lin(D, D), w.to_v_b = vec(D, -0.02f, 0.02f);
  w.to_out_w = lin(D, D), w.to_out_b = vec(D, -0.02f, 0.02f);
  w.norm3_w = vec(D, 0.8f, 1.2f), w.norm3_b = vec(D, -0.1f, 0.1f);
  w.ff1_w = lin(F, D), w.ff1_b = vec(F, -0.02f, 0.02f);
  w.ff2_w = lin(D, F), w.ff2_b = vec(D, -0.02f, 0.02f);
  Tensor h = random_normal({S, D}, 99);
  std::vector<uint8_t> kv(S, 1);
  kv[30] = kv[36] = 0;
  // float64 reference
  auto hd = ref::f64(h);
  auto n = ref::layer_norm(hd, ref::f64(w.norm1_w), ref::f64(w.norm1_b), S, D, 1e-5);
  auto q = ref::linear(n, ref::f64(w.to_q_w), ref::f64(w.to_q_b), S, D, D);
  auto k = ref::linear(n, ref::f64(w.to_k_w), ref::f64(w.to_k_b), S, D, D);
  auto v = ref::linear(n, ref::f64(w.to_v_w), ref::f64(w.to_v_b), S, D, D);
  auto a = ref::attention(q, k, v, S, S, H, Dh, 0.25, kv);
  auto o = ref::linear(a, ref::f64(w.to_out_w), ref::f64(w.to_out_b), S, D, D);
  for (size_t i = 0; i < hd.size(); ++i) hd[i] += o[i];
  auto n3 = ref::layer_norm(hd, ref::f64(w.norm3_w), ref::f64(w.norm3_b), S, D, 1e-5);
  auto f1 = ref::linear(n3, ref::f64(w.ff1_w), ref::f64(w.ff1_b), S, D, F, 2);
  auto f2 = ref::linear(f1, ref::f64(w.ff2_w), ref::f64(w.ff2_b), S, F, D);
  for (size_t i = 0; i < hd.size(); ++i) hd[i] += f2[i];
  layers::EncoderBlock blk(w, H, Dh, 1e-5f, Precision::fp32);
  blk.forward(h.data<float>(), S, kv.data());
  EXPECT_TRUE(close_rel_l2(h, ref::to_tensor(hd, {S, D}), 1e-6));
}

}  // namespace
}  // namespace meshnn::test
