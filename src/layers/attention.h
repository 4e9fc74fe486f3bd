// The one multi-head scaled-dot-product attention of the project (GR00T's VL self-attention and
// DiT, MiniMax-H3's causal attention projection) and the K/V cache of a causal stream. The
// transformer block built on it is in layers/transformer_block.h.
#pragma once

#include <cstdint>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::layers {

// Head-interleaved attention, every operand used in place through strides:
//   q: (S_q, Nh·Dh) rows ldq apart; k, v: (S_k, Nh·Dh) rows ldk / ldv apart
//   → out: (S_q, Nh·Dh) rows ldo apart; head h is columns h·Dh … h·Dh + Dh − 1.
// K / V may also be head-major: key l of head h at k + h·k_hs + l·ldk (k_hs 0: Dh, interleaved).
// Head slice (a tensor-parallel member's heads): the caller's pointers at its first head and
// n_heads = its head count; nothing else changes.
// out_h = softmax(scale · q_h·k_hᵀ + mask) · v_h, the softmax being ops::softmax_row (NaN
// propagates from a key the query may see; a query that may see no key gets a zero row, as SDPA's
// since torch 2.5). The mask: key_valid (S_k bytes, 0 = hidden key) or null, and when causal,
// query i sees only keys 0 … past + i (the queries are rows past … past + S_q − 1 of a sequence
// whose first S_k ≥ past + S_q keys are given: a K/V cache).
struct AttentionArgs {
  const float* q = nullptr;
  int64_t ldq = 0;
  const float* k = nullptr;
  int64_t ldk = 0, k_hs = 0;
  const float* v = nullptr;
  int64_t ldv = 0, v_hs = 0;
  float* out = nullptr;
  int64_t ldo = 0;
  int64_t s_q = 0, s_k = 0;
  int64_t n_heads = 0, head_dim = 0;
  float scale = 1.f;
  const uint8_t* key_valid = nullptr;
  bool causal = false;
  int64_t past = 0;  // causal only: keys before the first query
};
// Not causal: two oneDNN strided batched matmuls (all heads at once) around the softmax; scores
// is scratch of ≥ Nh·S_q·S_k floats; a hidden key's value row is read (times 0), so it must be
// finite. Causal: each (query, head) on its own over its visible keys only (a growing cache would
// make a oneDNN plan per length), so a row's result does not depend on how the rows were split
// into calls and a NaN in a later key never reaches an earlier query; scores is unused (null ok).
void multi_head_attention(const AttentionArgs& a, float* scores);

// The keys and values of every row seen so far, per batch item, for causal attention over a
// stream: item b holds (rows, 2·width) floats, row r = [k_r | v_r], width = Nh·Dh.
class KvCache {
 public:
  // Empties the cache and sizes it for `batch` items of `width` features.
  void start(int64_t batch, int64_t width);
  void clear();
  bool started() const { return batch_ >= 0; }
  int64_t batch() const { return batch_; }
  // Rows cached for item b (the past of its next query).
  int64_t rows(int64_t b) const;
  // Appends n rows to item b: k (n, width) and v (n, width), rows ld floats apart.
  void append(int64_t b, const float* k, const float* v, int64_t ld, int64_t n);
  // Points a's keys and values at item b's cache (k, ldk, v, ldv, s_k; interleaved heads).
  void bind(int64_t b, AttentionArgs& a) const;
  // Every item's cache as (B, rows, 2·width) (keys then values per row; the items hold equal
  // rows), undefined when not started: a stream's saved state.
  Tensor to_tensor() const;
  // The inverse of to_tensor: kv (B, rows, 2·width), or undefined for a cache not started.
  void from_tensor(const Tensor& kv, int64_t width);

 private:
  int64_t batch_ = -1, width_ = 0;
  std::vector<std::vector<float>> kv_;
};

}  // namespace meshnn::layers
