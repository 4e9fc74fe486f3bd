// One convolution engine for Conv1d, Conv2d and ConvTranspose1d on channels-last activations.
//
// The engine decides once per layer which algorithm runs it (conv_algorithm.h: our direct /
// Winograd kernels, or oneDNN) and runs it. The oneDNN side — primitives, bf16 precision splitting,
// the packed-weight store and the bounded plan cache — is the backend's (dnnl/conv_primitives.h);
// this file only routes to it.
//
// Weights and plans: the weights (our kernel's prepared weights, or oneDNN's weight store) are
// shared by reference by fork(); the plans (oneDNN primitives and their scratch) belong to one
// engine. Rule: one engine per thread; fork one per device runner.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dnnl/conv_primitives.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/state_dict.h"

namespace meshnn::conv {

using dnnl_glue::ConvKind;
using dnnl_glue::ConvPads;
using dnnl_glue::ConvSpec;

class Conv1dAlgorithm;
class Conv2dAlgorithm;

class ConvEngine {
 public:
  // weights: PyTorch layout, f32, dense — conv (C_out, C_in, K) / (C_out, C_in, Kh, Kw);
  // deconv (C_in, C_out, K). bias: (C_out) f32 or an undefined Tensor when spec.bias is false.
  // Our kernels prepare their weights here; oneDNN splits them (bf16 modes) and packs on the
  // first use of a layout. A Winograd layer whose filters the filter cache holds never makes the
  // weights (MappedWeight).
  ConvEngine(const ConvSpec& spec, const MappedWeight& weights, const Tensor& bias);
  ~ConvEngine();
  ConvEngine(const ConvEngine&) = delete;
  ConvEngine& operator=(const ConvEngine&) = delete;

  const ConvSpec& spec() const { return spec_; }
  // Output extent along spatial dim d for an input extent `in` and the given pads; ≤ 0 = empty.
  int64_t out_extent(int d, int64_t in, const ConvPads& pads) const;

  // src: (B, T, C_in) | (B, H, W, C_in) dense f32 → dst: (B, T_out, C_out) | (B, H_out, W_out,
  // C_out) dense f32 (shapes validated by the caller). accumulate: dst += conv(src) instead of dst
  // =. Not re-entrant on one engine: a plan owns its scratch (one thread per engine, no lock).
  void run(const Tensor& src, Tensor& dst, const ConvPads& pads, bool accumulate);

  // Creates (and caches) the plan for this shape now, so the first forward pays no JIT time.
  void prepare(const Shape& src_shape, const ConvPads& pads);
  // Implementation name(s) picked for this shape, e.g. our "direct:avx2" or oneDNN's
  // "brgconv:avx2" (for benchmarks).
  std::string impl_info(const Shape& src_shape, const ConvPads& pads);
  // An engine over the same weights with no plans of its own (for another device thread). The
  // weights are shared by reference: converted and packed once per process.
  std::unique_ptr<ConvEngine> fork() const;
  // Plans held now (bounded; for tests). Our kernels hold none.
  size_t plan_count() const;
  // Identity of the weights (equal for an engine and its forks).
  const void* weights_identity() const;

 private:
  ConvEngine() = default;
  // Polyphase ConvTranspose1d (see conv_engine.cc): algo1d_ is then the Conv1d with stride·C_out
  // outputs and kernel poly_m_ = ceil(K / stride) on the un-stuffed input.
  void run_polyphase(const Tensor& src, Tensor& dst, const ConvPads& pads, bool accumulate);
  ConvSpec spec_;
  bool polyphase_ = false;
  int64_t poly_m_ = 0;
  // Exactly one is set: our kernel for this layer (shared, read-only), or oneDNN's primitives.
  std::shared_ptr<const Conv1dAlgorithm> algo1d_;
  std::shared_ptr<const Conv2dAlgorithm> algo2d_;
  std::unique_ptr<dnnl_glue::ConvPrimitives> onednn_;
};

}  // namespace meshnn::conv
