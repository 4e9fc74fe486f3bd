// Multi-head scaled-dot-product attention and the pre-norm transformer encoder block of GR00T's
// VL self-attention (`SelfAttentionTransformer` → GR00T's own `BasicTransformerBlock`:
// norm1 → attn1 → residual → norm3 → ff → residual; no norm2/attn2, no positional embedding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/mlp.h"

namespace meshnn::layers {

// Head-interleaved attention, every operand used in place through strides:
//   q: (S_q, Nh·Dh) rows ldq apart; k, v: (S_k, Nh·Dh) rows ldk / ldv apart
//   → out: (S_q, Nh·Dh) rows ldo apart; head h is columns h·Dh … h·Dh + Dh − 1.
// K / V may also be head-major: key l of head h at k + h·k_hs + l·ldk (k_hs 0: Dh, interleaved).
// A head slice (tensor-parallel) is the caller's pointers and n_heads.
// out_h = softmax(scale · q_h·k_hᵀ + mask) · v_h. key_valid: S_k bytes (0 = hidden key) or null.
// The softmax is ops::softmax_row: a query whose keys are all hidden gets a zero row (as SDPA's
// since torch 2.5; the slot layout never produces one). scores: scratch of ≥ Nh·S_q·S_k floats.
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
};
void multi_head_attention(const AttentionArgs& a, float* scores);

// Weights of one encoder block, checkpoint layouts (nn.Linear [out, in]).
struct EncoderBlockWeights {
  Tensor norm1_w, norm1_b;
  Tensor to_q_w, to_q_b, to_k_w, to_k_b, to_v_w, to_v_b;  // (D, D), (D)
  Tensor to_out_w, to_out_b;                              // (D, D), (D)
  Tensor norm3_w, norm3_b;
  Tensor ff1_w, ff1_b, ff2_w, ff2_b;  // (F, D), (F), (D, F), (D)
};

class EncoderBlock {
 public:
  EncoderBlock() = default;
  // Q, K and V are fused into one (D → 3D) product in the order q, k, v.
  EncoderBlock(const EncoderBlockWeights& w, int64_t n_heads, int64_t head_dim, float eps,
               Precision precision);

  int64_t dim() const { return dim_; }
  // h: (M, D) f32 rows (contiguous), updated in place: h += attn(LN1 h); h += FF(LN3 h).
  // key_valid: M bytes or null (all keys attend). Scratch grows to M on first use and is kept.
  // Threads: one block per thread; a copy shares the weights and has its own plans and scratch.
  void forward(float* h, int64_t M, const uint8_t* key_valid);
  // Pre-builds the matmul plans and scratch for M rows.
  void prepare(int64_t M);

 private:
  // Working memory of one block, grown on first use. A copy of the block starts without (its
  // Linears fork: the weights are shared, plans and scratch are the copy's own).
  struct Scratch {
    Tensor n, qkv, attn, scores, hidden;
    int64_t rows = 0;
    Scratch() = default;
    Scratch(const Scratch&) {}
    Scratch& operator=(const Scratch&) {
      *this = Scratch();
      return *this;
    }
    Scratch(Scratch&&) noexcept = default;
    Scratch& operator=(Scratch&&) noexcept = default;
  };
  LayerNorm norm1_, norm3_;
  Linear qkv_, out_;
  FeedForward ff_;
  int64_t dim_ = 0, n_heads_ = 0, head_dim_ = 0;
  float scale_ = 1.f;
  Scratch s_;
};

}  // namespace meshnn::layers
