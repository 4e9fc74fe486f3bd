// The transformer block (layers/transformer_block.h) against a float64 reference, whole and as
// tensor-parallel members on a local 1×2 mesh.
#include "layers/transformer_block.h"

#include <gtest/gtest.h>

#include <cmath>
#include <mutex>

#include "layers/gr00t_layers_ref.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

constexpr int64_t kS = 38, kH = 4, kDh = 12, kD = kH * kDh, kF = 4 * kD;

layers::TransformerBlockWeights random_weights() {
  layers::TransformerBlockWeights w;
  uint64_t seed = 100;
  auto lin = [&](int64_t o, int64_t i) {
    return random_uniform({o, i}, seed++, -1.f / std::sqrt(float(i)), 1.f / std::sqrt(float(i)));
  };
  auto vec = [&](int64_t n, float lo, float hi) { return random_uniform({n}, seed++, lo, hi); };
  w.norm1_w = vec(kD, 0.8f, 1.2f), w.norm1_b = vec(kD, -0.1f, 0.1f);
  w.to_q_w = lin(kD, kD), w.to_q_b = vec(kD, -0.02f, 0.02f);
  w.to_k_w = lin(kD, kD), w.to_k_b = vec(kD, -0.02f, 0.02f);
  w.to_v_w = lin(kD, kD), w.to_v_b = vec(kD, -0.02f, 0.02f);
  w.to_out_w = lin(kD, kD), w.to_out_b = vec(kD, -0.02f, 0.02f);
  w.norm3_w = vec(kD, 0.8f, 1.2f), w.norm3_b = vec(kD, -0.1f, 0.1f);
  w.ff1_w = lin(kF, kD), w.ff1_b = vec(kF, -0.02f, 0.02f);
  w.ff2_w = lin(kD, kF), w.ff2_b = vec(kD, -0.02f, 0.02f);
  return w;
}

// h (S, D) → the block's output in float64: h += attn(LN1 h); h += FF(LN3 h).
Tensor reference(const layers::TransformerBlockWeights& w, const Tensor& h,
                 const std::vector<uint8_t>& kv) {
  auto hd = ref::f64(h);
  auto n = ref::layer_norm(hd, ref::f64(w.norm1_w), ref::f64(w.norm1_b), kS, kD, 1e-5);
  auto q = ref::linear(n, ref::f64(w.to_q_w), ref::f64(w.to_q_b), kS, kD, kD);
  auto k = ref::linear(n, ref::f64(w.to_k_w), ref::f64(w.to_k_b), kS, kD, kD);
  auto v = ref::linear(n, ref::f64(w.to_v_w), ref::f64(w.to_v_b), kS, kD, kD);
  auto a = ref::attention(q, k, v, kS, kS, kH, kDh, 1.0 / std::sqrt(double(kDh)), kv);
  auto o = ref::linear(a, ref::f64(w.to_out_w), ref::f64(w.to_out_b), kS, kD, kD);
  for (size_t i = 0; i < hd.size(); ++i) hd[i] += o[i];
  auto n3 = ref::layer_norm(hd, ref::f64(w.norm3_w), ref::f64(w.norm3_b), kS, kD, 1e-5);
  auto f1 = ref::linear(n3, ref::f64(w.ff1_w), ref::f64(w.ff1_b), kS, kD, kF, 2);
  auto f2 = ref::linear(f1, ref::f64(w.ff2_w), ref::f64(w.ff2_b), kS, kF, kD);
  for (size_t i = 0; i < hd.size(); ++i) hd[i] += f2[i];
  return ref::to_tensor(hd, {kS, kD});
}

TEST(TransformerBlock, MatchesFloat64) {
  const layers::TransformerBlockWeights w = random_weights();
  Tensor h = random_normal({kS, kD}, 99);
  std::vector<uint8_t> kv(kS, 1);
  kv[30] = kv[36] = 0;
  const Tensor want = reference(w, h, kv);
  layers::TransformerBlock blk(w, kH, kDh, 1e-5f, Precision::fp32);
  blk.forward(h.data<float>(), kS, kv.data());
  EXPECT_TRUE(close_rel_l2(h, want, 1e-6));
}

TEST(TransformerBlock, TensorParallelMembersMatchFloat64) {
  // Two members (2 heads and F/2 hidden features each) on a 1×2 mesh: every device ends with the
  // whole block's rows.
  const layers::TransformerBlockWeights w = random_weights();
  const Tensor h = random_normal({kS, kD}, 98);
  std::vector<uint8_t> kv(kS, 1);
  kv[3] = kv[37] = 0;
  const Tensor want = reference(w, h, kv);
  MeshConfig mc;
  mc.rows = 1, mc.cols = 2, mc.threads_per_device = 1;
  std::mutex mu;
  std::vector<Tensor> got(2);
  run_spmd(mc, [&](Device& dev) {
    layers::TransformerBlock blk(w, kH, kDh, 1e-5f, Precision::fp32,
                                 layers::TensorParallel{1, 2, dev.coord(1)});
    Tensor mine = h.clone();
    blk.forward(mine.data<float>(), kS, kv.data(), &dev.ccl());
    std::lock_guard<std::mutex> lock(mu);
    got[static_cast<size_t>(dev.rank())] = mine;
  });
  for (const Tensor& g : got) EXPECT_TRUE(close_rel_l2(g, want, 1e-6));
  // A member without its group's collectives is refused.
  layers::TransformerBlock lone(w, kH, kDh, 1e-5f, Precision::fp32,
                                layers::TensorParallel{1, 2, 0});
  Tensor x = h.clone();
  EXPECT_ANY_THROW(lone.forward(x.data<float>(), kS, kv.data()));
}

}  // namespace
}  // namespace meshnn::test
