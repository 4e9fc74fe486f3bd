// oneDNN glue for dense products: a Linear layer (y = act(x·W + b), or y += x·W + b) and a strided
// batched matmul for attention (Q·Kᵀ, P·V) and the one-hot gather, whose operands change on
// every call.
//
// No oneDNN type leaks out of this header (pimpl), so src/layers/ and src/models/ can use it.
// Precision: fp32, or bf16 operands with f32 accumulation. fp32 runs dnnl_sgemm on the weights in
// their own layout (see matmul.cc for why not the matmul primitive). oneDNN 2.6 has no bf16 matmul
// below avx512_bf16 (the pd is "unimplemented" on AVX2), so there the bf16 contract is emulated
// with the same numerics: weights rounded to bf16 once at construction, activations rounded to
// bf16 per call, both kept in f32, then the f32 product (every product of two bf16 values is exact
// in f32, so only the accumulation order differs from the native kernel). The native bf16 path
// (AVX512-BF16 CPUs) uses the matmul primitive with weights packed once; it is untested here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"

namespace meshnn::dnnl_glue {

enum class PostOp { none, relu, gelu_tanh };

// Threads: the weights (and their packed copies) are shared by every fork of a primitive and
// never change after construction; the plans and scratch buffers are the primitive's own and
// change on every run. So one primitive serves one thread at a time, and a thread that needs the
// same layer takes a fork() (plans of its own, no weight copy). No lock on run(); building a plan
// (the first run at a new M) takes the packed-weight store's lock.
class LinearPrimitive {
 public:
  enum class WeightLayout { in_out, out_in };
  // weights: f32 dense, (K, N) = [in, out] for in_out, or nn.Linear's (N, K) = [out, in] for
  // out_in (read in place as a transposed operand: no copy); the caller's tensor is kept, not
  // copied (emulated bf16 keeps a bf16-rounded private copy);
  // bias: (N) f32 or an undefined Tensor. precision: fp32 | bf16 (others: Unsupported).
  LinearPrimitive(const Tensor& weights, WeightLayout layout, const Tensor& bias, PostOp act,
                  Precision precision);
  ~LinearPrimitive();
  LinearPrimitive(const LinearPrimitive&) = delete;
  LinearPrimitive& operator=(const LinearPrimitive&) = delete;
  // The same layer with fresh plans and scratch over the shared weights (and packed copies); keeps
  // the packed-f32 choice.
  std::unique_ptr<LinearPrimitive> fork() const;

  int64_t in_features() const;
  int64_t out_features() const;
  // True when bf16 runs on oneDNN's native bf16 kernel, false when emulated (or fp32).
  bool native_bf16() const;

  // src: (M, K) f32, rows `lda` floats apart → dst: (M, N) f32, rows `ldd` apart.
  // dst = act(src·W + b), or with accumulate dst += src·W + b (act must be none then: the
  // residual is added before any activation would apply, which no caller needs).
  // Not re-entrant on one instance (per-M scratch and plans are cached inside): one thread per
  // instance, fork() for another.
  void run(const float* src, int64_t M, int64_t lda, float* dst, int64_t ldd, bool accumulate);
  // Native bf16: builds the plan for M ahead of time so the first call pays no JIT / packing
  // (nothing to prepare on the sgemm path).
  void prepare(int64_t M, bool accumulate);
  // fp32 only: run on the matmul primitive with the weights packed once (a private packed copy)
  // instead of dnnl_sgemm on the caller's layout; faster at few rows. Call before the first run.
  void set_packed_f32(bool on);
  // Implementation name: "dnnl_sgemm", or the native bf16 primitive's (e.g.
  // "brg:avx512_core_bf16").
  std::string impl_info(int64_t M, bool accumulate);

  struct Impl;
  struct Shared;

 private:
  explicit LinearPrimitive(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// dst[b] = scale · src[b] (M, K) · wei[b] (K, N) for b < batch, every operand given by element
// strides {batch, row, col} so head-interleaved (S, Nh·Dh) activations are used in place.
// f32 only. Plans are cached per thread by the full descriptor.
struct StridedMatmul {
  int64_t batch = 1, M = 0, K = 0, N = 0;
  int64_t src_strides[3] = {0, 0, 1};
  int64_t wei_strides[3] = {0, 0, 1};
  int64_t dst_strides[3] = {0, 0, 1};
  float scale = 1.f;
};
void strided_matmul(const StridedMatmul& d, const float* src, const float* wei, float* dst);

}  // namespace meshnn::dnnl_glue
