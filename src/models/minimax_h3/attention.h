// MiniMax-H3's causal-attention projection (`pre_block`) as a streaming graph node: encoder rows
// (B, n, latent_dim) → latent rows (B, n, latent_channels), every row final as soon as it arrives
// (the attention is causal), the keys and values of all earlier rows kept as a cache.
//
//   a = norm1(h); [q | k | v] = a·W_qkvᵀ + [q_bias ; zero_k_bias ; v_bias]
//   o_h = softmax(q_h k_hᵀ / √hd, keys 0 … i) v_h;  ō = mean over heads (B, n, hd)
//   attn = attn.proj(adaptive_avg_pool(ō → C));  y = proj(norm3(h)) + attn
//   out = y + w2(gelu_tanh(w0 g) ⊙ w1 g) with g = mlp.norm(norm2(y))
#pragma once

#include <map>
#include <memory>
#include <string>

#include "graph/graph.h"
#include "layers/attention.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"

namespace meshnn::models::minimax_h3 {

class CausalAttentionProjection final : public graph::Node {
 public:
  // state: the tensors under "pre_block." (any float dtype); dims from the config.
  CausalAttentionProjection(const std::map<std::string, Tensor>& state, int64_t latent_dim,
                            int64_t heads, int64_t latent_channels, Precision precision);
  // One shot: x (B, T, D) → (B, T, C), the whole sequence through a fresh cache. Time-sharded:
  // x (B, S, D) this device's shard → its (B, S, C) shard; the whole past is gathered first
  // (reach: kWholePast), so every device of the time line takes part.
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override;
  int64_t out_rows(int64_t n) const override { return n; }
  // Causal: nothing to the right, the whole past to the left.
  graph::Reach reach() const override {
    return {graph::Rows(graph::kWholePast), graph::Rows(0), graph::Rows(1)};
  }
  // The past is gathered, never taken as a halo: any shard will do.
  int64_t min_shard_rows() const override { return 1; }
  // in: (B, n, D) the next rows → (B, n, C).
  Tensor push(const Tensor& in) override;
  Tensor flush() override;
  void reset() override;
  int64_t final_rows(int64_t n) const override { return n; }
  graph::NodePtr fork() const override;
  // The key/value cache as (B, past, 2D) and past (absolute: every key is attended to, so only
  // streams of equal length stack).
  void save_state(graph::StreamState& s) const override;
  void load_state(graph::StateReader& r) override;
  // Rows of keys and values cached (the whole past of the stream).
  int64_t held_rows() const override { return cache_.started() ? cache_.rows(0) : 0; }

 private:
  CausalAttentionProjection(const CausalAttentionProjection&) = default;
  // past: (B, n, D) rows before the ones to be pushed → their keys and values appended to the
  // cache (no output).
  void prime(const Tensor& past);
  // qkv: (n, 3D) rows of one batch item appended to its cache → ō pooled (n, C) into `pooled`.
  void attend(int64_t b, const float* qkv, int64_t n, float* pooled);
  // Starts the cache for B items on the first rows of a stream; checks B stays the same after.
  void start(int64_t B);

  int64_t D_, H_, C_, hd_;
  layers::LayerNorm norm1_, norm3_, norm2_, mlp_norm_;
  layers::Linear qkv_, attn_proj_, proj_, w0_, w1_, w2_;
  layers::KvCache cache_;  // per batch item: the keys and values of every row so far
};

}  // namespace meshnn::models::minimax_h3
