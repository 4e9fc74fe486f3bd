// Linear layer: y = act(x·Wᵀ + b) on oneDNN with the weights packed once (dnnl/matmul.h).
//
// Two weight conventions exist in the checkpoints: nn.Linear stores [out, in]
// (`*.weight`), CategorySpecificLinear stores [in, out] per embodiment (`*.W`). Both are taken
// as they are; oneDNN reads the [out, in] buffer as a transposed view and packs it once.
#pragma once

#include <memory>

#include "dnnl/matmul.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"

namespace meshnn::layers {

using Activation = dnnl_glue::PostOp;

class Linear {
 public:
  Linear() = default;
  // A copy is a fork: the same weights (and packed copies), its own plans and scratch. Copy a
  // layer for each thread that runs it.
  Linear(const Linear& other);
  Linear& operator=(const Linear& other);
  Linear(Linear&&) noexcept = default;
  Linear& operator=(Linear&&) noexcept = default;
  // weight: (out, in) f32 (nn.Linear); bias: (out) f32 or undefined.
  static Linear from_out_in(const Tensor& weight, const Tensor& bias,
                            Activation act = Activation::none,
                            Precision precision = Precision::fp32);
  // weight: (in, out) f32 (CategorySpecificLinear slice); bias: (out) f32 or undefined.
  static Linear from_in_out(const Tensor& weight, const Tensor& bias,
                            Activation act = Activation::none,
                            Precision precision = Precision::fp32);

  bool defined() const { return prim_ != nullptr; }
  int64_t in_features() const { return prim_->in_features(); }
  int64_t out_features() const { return prim_->out_features(); }

  // Threads: forward mutates the layer's plans and scratch (cached per row count M), hence not
  // const: one Linear serves one thread at a time; its copies share the weights and run
  // concurrently.
  // x: (M, in) f32 → (M, out) f32 (x may have any leading dims; the last is `in`).
  Tensor forward(const Tensor& x);
  // Raw rows: src (M, in) rows `lda` floats apart → dst (M, out) rows `ldd` apart;
  // accumulate: dst += x·Wᵀ + b (fused residual, only without an activation).
  void forward_rows(const float* src, int64_t M, int64_t lda, float* dst, int64_t ldd,
                    bool accumulate = false);
  void prepare(int64_t M, bool accumulate = false) { prim_->prepare(M, accumulate); }
  dnnl_glue::LinearPrimitive& primitive() { return *prim_; }
  const dnnl_glue::LinearPrimitive& primitive() const { return *prim_; }

 private:
  std::unique_ptr<dnnl_glue::LinearPrimitive> prim_;
};

}  // namespace meshnn::layers
