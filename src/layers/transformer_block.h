// The pre-norm transformer encoder block of GR00T's VL self-attention (`SelfAttentionTransformer`
// → GR00T's own `BasicTransformerBlock`: norm1 → attn1 → residual → norm3 → ff → residual; no
// norm2/attn2, no positional embedding), whole on one device or as a tensor-parallel member.
#pragma once

#include <cstdint>

#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/mlp.h"

namespace meshnn {
class CclManager;
}

namespace meshnn::layers {

// Weights of one block, checkpoint layouts (nn.Linear [out, in]).
struct TransformerBlockWeights {
  Tensor norm1_w, norm1_b;
  Tensor to_q_w, to_q_b, to_k_w, to_k_b, to_v_w, to_v_b;  // (D, D), (D)
  Tensor to_out_w, to_out_b;                              // (D, D), (D)
  Tensor norm3_w, norm3_b;
  Tensor ff1_w, ff1_b, ff2_w, ff2_b;  // (F, D), (F), (D, F), (D)
};

// This device's place in a tensor-parallel group: member `rank` of `size` along mesh `axis`.
struct TensorParallel {
  int axis = 0, size = 1, rank = 0;
};

class TransformerBlock {
 public:
  TransformerBlock() = default;
  // Q, K and V are fused into one product in the order q, k, v. A tensor-parallel member
  // (tp.size > 1) keeps its heads (n_heads / size, rank-th group) of q, k, v and the matching
  // input columns of to_out, and its F / size slice of ff1 and input columns of ff2.
  TransformerBlock(const TransformerBlockWeights& w, int64_t n_heads, int64_t head_dim, float eps,
                   Precision precision, const TensorParallel& tp = {});

  // h: (M, D) f32 rows (contiguous), updated in place: h += attn(LN1 h); h += FF(LN3 h).
  // key_valid: M bytes or null (all keys attend). Scratch grows to M on first use and is kept.
  // A tensor-parallel member needs ccl (the group's collectives; M a multiple of size) and
  // splits Megatron-style, the LayerNorms and residual adds on row shards:
  //   qkv = LN1(h)·Wqkv_localᵀ + b          (M, 3·D/size)   column-parallel: this device's heads
  //   hs = h[shard] + RS(attn(qkv)·Wo_localᵀ) + bo           (M/size, D) reduce-scatter over rows
  //   hs += RS(GELU(AG(LN3(hs))·W1_localᵀ + b1_local)·W2_localᵀ) + b2;  h = AG(hs)
  // Threads: one block per thread; a copy shares the weights and has its own plans and scratch.
  void forward(float* h, int64_t M, const uint8_t* key_valid, CclManager* ccl = nullptr);
  // Pre-builds the matmul plans and scratch for M rows.
  void prepare(int64_t M);

 private:
  // Working memory of one block, grown on first use. A copy of the block starts without (its
  // Linears fork: the weights are shared, plans and scratch are the copy's own).
  struct Scratch {
    Tensor n, qkv, attn, scores, hidden, part;
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
  // h += attn(LN1 h) up to the output projection: attn (M, D/size) in s_.attn.
  void attend(const float* h, int64_t M, const uint8_t* key_valid);
  // The tensor-parallel forward (tp_.size > 1).
  void forward_split(float* h, int64_t M, CclManager& ccl);

  LayerNorm norm1_, norm3_;
  Linear qkv_, out_;
  FeedForward ff_;
  Tensor bo_, b2_;  // tensor-parallel: the biases added once after the reduction
  TensorParallel tp_;
  int64_t dim_ = 0, n_heads_ = 0, head_dim_ = 0;
  float scale_ = 1.f;
  Scratch s_;
};

}  // namespace meshnn::layers
