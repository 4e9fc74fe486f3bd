// Precision splitting for oneDNN's convolution primitives: how the bf16 modes form their products.
//
// A bf16 mode writes every f32 value v as hi + lo with hi = bf16(v), lo = bf16(v − hi) and sums
// the products of the parts it keeps (docs/precision.md): bf16 keeps hi·hi, bf16x2 adds
// hi(x)·lo(w), bf16x3 also lo(x)·hi(w). This file owns the split of weights (once, at load) and
// of activations (per call); conv_primitives only runs one primitive per term (our own kernels
// round their operands themselves).
#pragma once

#include <cstdint>
#include <vector>

#include "meshnn/core/precision.h"

namespace meshnn::dnnl_glue {

// Which part of the split activations a term multiplies.
enum class SrcPart { raw, hi, lo };
struct PrecisionTerm {
  SrcPart src;
  int w;  // index into the weight terms (split_weights)
};

// The products mode `p` sums, big term first. Execute them in reverse so the small terms
// accumulate before the big one is added.
std::vector<PrecisionTerm> precision_terms(Precision p);

// w: n f32 values (PyTorch layout) → the weight terms of mode `p`: fp32 {w}; bf16 {hi};
// bf16x2 / bf16x3 {hi, lo}. Values are f32 but bf16-representable in the bf16 modes.
std::vector<std::vector<float>> split_weights(const float* w, int64_t n, Precision p);

// x: n f32 values → hi = bf16(x), lo = bf16(x − hi) (lo skipped when nullptr), as bf16 bits
// (native bf16 primitives) or as f32 values (bf16 emulated in f32 primitives). OpenMP inside.
void split_activations_bf16(const float* x, int64_t n, uint16_t* hi, uint16_t* lo);
void split_activations_f32(const float* x, int64_t n, float* hi, float* lo);

}  // namespace meshnn::dnnl_glue
