// The one multi-head attention (layers/attention.h) against float64 references: strided oneDNN
// matmuls + masked softmax, and the causal mode over a K/V cache (mask, head slice, NaN).
#include "layers/attention.h"

#include <gtest/gtest.h>

#include <cmath>

#include "layers/gr00t_layers_ref.h"
#include "meshnn/core/error.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

TEST(Attention, MultiHeadWithKeyMaskMatchesFloat64) {
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

TEST(Attention, HeadMajorKeysAndValuesMatchFloat64) {
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

TEST(Attention, FullyMaskedRowIsZero) {
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

// Causal attention over a K/V cache of `past` rows: q (Sq, H·Dh) rows of the sequence positions
// past … past + Sq − 1, kv (past + Sq, 2·H·Dh) rows [k | v]; heads [h0, h0 + nh) only (a
// tensor-parallel member's slice) → (Sq, nh·Dh).
Tensor causal(const Tensor& q, const Tensor& kv, int64_t past, int64_t H, int64_t Dh, int64_t h0,
              int64_t nh, const std::vector<uint8_t>& key_valid, float scale) {
  const int64_t Sq = q.dim(0), D = H * Dh;
  Tensor out = random_normal({Sq, nh * Dh}, 9);  // every entry must be written
  layers::AttentionArgs a;
  a.q = q.data<float>() + h0 * Dh, a.ldq = D;
  a.k = kv.data<float>() + h0 * Dh, a.ldk = 2 * D;
  a.v = kv.data<float>() + D + h0 * Dh, a.ldv = 2 * D;
  a.out = out.data<float>(), a.ldo = nh * Dh;
  a.s_q = Sq, a.s_k = kv.dim(0), a.n_heads = nh, a.head_dim = Dh, a.scale = scale;
  a.key_valid = key_valid.empty() ? nullptr : key_valid.data();
  a.causal = true, a.past = past;
  layers::multi_head_attention(a, nullptr);
  return out;
}

TEST(Attention, CausalWithCacheMaskAndHeadSliceMatchesFloat64) {
  const int64_t past = 13, Sq = 9, Sk = past + Sq, H = 4, Dh = 12, D = H * Dh;
  const Tensor q = random_normal({Sq, D}, 51), kv = random_normal({Sk, 2 * D}, 52);
  std::vector<uint8_t> valid(Sk, 1);
  for (int64_t j : {0, 4, 13, 17, 21}) valid[j] = 0;
  std::vector<double> kd(Sk * D), vd(Sk * D);
  for (int64_t j = 0; j < Sk; ++j)
    for (int64_t c = 0; c < D; ++c) {
      kd[j * D + c] = kv.data<float>()[j * 2 * D + c];
      vd[j * D + c] = kv.data<float>()[j * 2 * D + D + c];
    }
  const Tensor want =
      ref::to_tensor(ref::attention(ref::f64(q), kd, vd, Sq, Sk, H, Dh, 0.3, valid, past), {Sq, D});
  EXPECT_TRUE(close_rel_l2(causal(q, kv, past, H, Dh, 0, H, valid, 0.3f), want, 1e-6, "all"));
  // Heads 1 and 2 alone: the same columns of the whole result.
  EXPECT_TRUE(close_rel_l2(causal(q, kv, past, H, Dh, 1, 2, valid, 0.3f),
                           want.narrow(1, Dh, 2 * Dh).clone(), 1e-6, "slice"));
  // Past 0: the first query sees only key 0.
  const Tensor q0 = q.narrow(0, 0, 5).clone(), kv0 = kv.narrow(0, 0, 5).clone();
  std::vector<double> k0(kd.begin(), kd.begin() + 5 * D), v0(vd.begin(), vd.begin() + 5 * D);
  EXPECT_TRUE(close_rel_l2(
      causal(q0, kv0, 0, H, Dh, 0, H, {}, 0.3f),
      ref::to_tensor(ref::attention(ref::f64(q0), k0, v0, 5, 5, H, Dh, 0.3, {}, 0), {5, D}), 1e-6,
      "no past"));
}

TEST(Attention, CausalRowsDoNotDependOnHowTheyArrive) {
  // Rows pushed through a KvCache in uneven pieces give the bits of one call over all rows.
  const int64_t S = 23, H = 2, Dh = 16, D = H * Dh, B = 2;
  const Tensor qkv = random_normal({B, S, 3 * D}, 61);
  auto run = [&](const std::vector<int64_t>& pieces) {
    layers::KvCache cache;
    cache.start(B, D);
    Tensor out = Tensor::empty({B, S, D});
    for (int64_t b = 0; b < B; ++b) {
      int64_t r = 0;
      for (int64_t n : pieces) {
        const float* rows = qkv.data<float>() + (b * S + r) * 3 * D;
        layers::AttentionArgs a;
        a.past = cache.rows(b);
        cache.append(b, rows + D, rows + 2 * D, 3 * D, n);
        cache.bind(b, a);
        a.q = rows, a.ldq = 3 * D, a.out = out.data<float>() + (b * S + r) * D, a.ldo = D;
        a.s_q = n, a.n_heads = H, a.head_dim = Dh, a.scale = 0.25f, a.causal = true;
        layers::multi_head_attention(a, nullptr);
        r += n;
      }
      EXPECT_EQ(cache.rows(b), S);
    }
    return out;
  };
  const Tensor whole = run({S});
  EXPECT_TRUE(bit_equal(run({1, 1, 5, 9, 7}), whole, "pieces"));
  EXPECT_TRUE(bit_equal(run(std::vector<int64_t>(S, 1)), whole, "row by row"));
}

TEST(Attention, CausalNanReachesOnlyLaterQueries) {
  const int64_t S = 10, H = 3, Dh = 8, D = H * Dh;
  const Tensor q = random_normal({S, D}, 71), kv = random_normal({S, 2 * D}, 72);
  const Tensor clean = causal(q, kv, 0, H, Dh, 0, H, {}, 0.35f);
  // A NaN in key 6 (head 1's columns) makes every output of head 1 NaN from query 6 on (its
  // softmax row is NaN, torch.softmax's rule); a NaN in value 8 (column 5 of head 2) reaches that
  // column from query 8 on. Every earlier query keeps its bits.
  Tensor bad = kv.clone();
  bad.data<float>()[6 * 2 * D + 1 * Dh + 3] = NAN;
  bad.data<float>()[8 * 2 * D + D + 2 * Dh + 5] = NAN;
  const Tensor got = causal(q, bad, 0, H, Dh, 0, H, {}, 0.35f);
  for (int64_t i = 0; i < S; ++i)
    for (int64_t c = 0; c < D; ++c) {
      const float g = got.data<float>()[i * D + c], w = clean.data<float>()[i * D + c];
      const int64_t h = c / Dh;
      const bool nan = (h == 1 && i >= 6) || (c == 2 * Dh + 5 && i >= 8);
      if (nan)
        EXPECT_TRUE(std::isnan(g)) << i << "," << c;
      else
        EXPECT_EQ(g, w) << i << "," << c;
    }
  // A hidden key is never read: a NaN there changes nothing; a query with no visible key is 0.
  std::vector<uint8_t> valid(S, 1);
  valid[0] = valid[6] = valid[8] = 0;
  const Tensor masked = causal(q, bad, 0, H, Dh, 0, H, valid, 0.35f);
  for (int64_t c = 0; c < D; ++c) EXPECT_EQ(masked.data<float>()[c], 0.f) << c;
  for (int64_t i = 0; i < S * D; ++i) EXPECT_TRUE(std::isfinite(masked.data<float>()[i])) << i;
}

TEST(Attention, CausalNeedsItsKeys) {
  const Tensor q = random_normal({4, 8}, 81), kv = random_normal({5, 16}, 82);
  EXPECT_THROW(causal(q, kv, 2, 1, 8, 0, 1, {}, 1.f), ShapeError);  // 2 + 4 > 5 keys
}

}  // namespace
}  // namespace meshnn::test
