// oneDNN's convolution / deconvolution primitives for one layer on channels-last activations: the
// oneDNN glue of the conv engine (layers/conv_engine.h, which chooses between these and our own
// kernels). Builds the primitives, packs the weights ONCE into the layout a primitive prefers
// (format_tag::any) and runs them. Its parts, free of oneDNN types, are one file each: how the bf16
// modes split values (conv_precision.h), the packed-weight store (conv_weights.h) and the bounded
// plan cache (conv_plan_cache.h: one plan per input shape and padding, at most 16).
//
// Weights and plans: the weight terms and their packed layouts live in a store that fork() shares
// by reference; the plans (primitives and their scratch) belong to one object. Rule: one object per
// thread; fork one per device runner.
// No oneDNN type leaks out of this header (pimpl), so src/layers/ can use it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"

namespace meshnn::dnnl_glue {

enum class ConvKind { conv, deconv };

struct ConvSpec {
  ConvKind kind = ConvKind::conv;
  int spatial = 1;  // 1: src (B, T, C); 2: src (B, H, W, C), H = time
  int64_t c_in = 0;
  int64_t c_out = 0;
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> dilation{1, 1};  // PyTorch convention: 1 = dense (oneDNN gets d − 1)
  bool bias = true;
  Precision precision = Precision::fp32;
};

// oneDNN padding_l / padding_r per spatial dim. For a conv they are implicit zero rows added to
// the input; for a deconv they are output rows cropped (PyTorch padding P, output_padding op →
// l = P, r = P − op).
struct ConvPads {
  std::array<int64_t, 2> l{0, 0};
  std::array<int64_t, 2> r{0, 0};
};

// Output extent along spatial dim d of a layer `spec` for an input extent `in` and the given pads;
// ≤ 0 = empty. Geometry only (every algorithm agrees on it).
int64_t conv_out_extent(const ConvSpec& spec, int d, int64_t in, const ConvPads& pads);

class ConvPrimitives {
 public:
  // weights: PyTorch layout, f32, dense — conv (C_out, C_in, K) / (C_out, C_in, Kh, Kw);
  // deconv (C_in, C_out, K). bias: (C_out) f32 or an undefined Tensor when spec.bias is false.
  // The weights are split (bf16 modes) and kept; packing happens on the first use of a layout.
  ConvPrimitives(const ConvSpec& spec, const Tensor& weights, const Tensor& bias);
  ~ConvPrimitives();
  ConvPrimitives(const ConvPrimitives&) = delete;
  ConvPrimitives& operator=(const ConvPrimitives&) = delete;

  // src: (B, T, C_in) | (B, H, W, C_in) dense f32 → dst: (B, T_out, C_out) | (B, H_out, W_out,
  // C_out) dense f32 (shapes validated by the caller). accumulate: dst += conv(src) instead of dst
  // =. Not re-entrant on one object: a plan owns its scratch (one thread per object, no lock).
  void run(const Tensor& src, Tensor& dst, const ConvPads& pads, bool accumulate);

  // oneDNN implementation name(s) picked for this shape, e.g. "brgconv:avx2" (for benchmarks).
  // Creates (and caches) the plan and packs its weights now, so the first run pays no JIT time.
  std::string impl_info(const Shape& src_shape, const ConvPads& pads);
  // True when the bf16 modes run on native bf16 primitives (AVX512-BF16), false when emulated.
  bool native_bf16() const;
  // An object over the same weight store with no plans of its own (for another device thread).
  // The store is shared by reference: weights are converted and packed once per process.
  std::unique_ptr<ConvPrimitives> fork() const;
  // Plans held now (bounded; for tests).
  size_t plan_count() const;
  // Identity of the weight store (equal for an object and its forks).
  const void* weights_identity() const;

 private:
  ConvPrimitives() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshnn::dnnl_glue
