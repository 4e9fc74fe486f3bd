// Winograd F(2×2, 3×3) for stride-1, undilated 3×3 f32 Conv2d on channels-last (H, W, C) rows:
// the mel-VAE decoder's causal convolutions.
//
// Per 2×2 output tile: the 4×4 input patch is transformed (V = Bᵀ·d·B, additions only), each of
// the 16 transform points is one GEMM (tiles × C_in)·(C_in × C_out) against the transformed
// filters (U = G·g·Gᵀ, made once at load in float64), and the products go back through
// Y = Aᵀ·M·A (additions only): 16 multiplies per 4 outputs instead of 36, 2.25× fewer FLOPs.
// Its transforms only use 0, ±1 and ±½, so the error stays at the f32 direct algorithm's level
// (tests/kernels/winograd2d_test.cc, docs/precision.md). F(4×4, 3×3) would save 4× but its ±2
// points raise the error past the 3e-6 contract at these depths, as the 1-D survey showed for
// α ≥ 9.
#pragma once

#include <cstdint>

#include "kernels/winograd1d.h"

namespace meshnn::kernels {

class Winograd2d {
 public:
  // weights: PyTorch Conv2d (C_out, C_in, 3, 3) f32 (read only on a filter cache miss, as for
  // Winograd1d); bias: C_out values or nullptr. The filters are transformed here, once (float64
  // sums, one rounding), in parallel over input channels.
  // precision / isa: as for Winograd1d (packed GEMM per transform point on AVX-512, bf16 operands
  // rounded once).
  Winograd2d(const FilterWeights& weights, const float* bias, int64_t c_out, int64_t c_in,
             WinogradPrecision precision = WinogradPrecision::f32,
             WinogradIsa isa = WinogradIsa::automatic);

  // One batch item: x (H, W, C_in) → y (H_out, W_out, C_out); output (i, j) reads input
  // (i + a − pad_h, j + b − pad_w) for a, b < 3, zeros outside [0, H) × [0, W) (so the right /
  // bottom pads are implied by H_out, W_out). y = conv + bias, or y += conv + bias when
  // accumulate. OpenMP inside; thread-safe (read-only filters, thread-local scratch).
  void run(const float* x, int64_t H, int64_t W, int64_t pad_h, int64_t pad_w, float* y,
           int64_t H_out, int64_t W_out, bool accumulate) const;

  int64_t c_in() const { return c_in_; }
  int64_t c_out() const { return c_out_; }
  WinogradPrecision precision() const { return precision_; }
  const char* gemm_label() const;  // as Winograd1d::gemm_label

 private:
  int64_t c_in_, c_out_;
  WinogradPrecision precision_;
  bool packed_ = false, native_bf16_ = false;
  // u: sgemm path, transformed filters [ξ (16)][C_in][C_out]; pk: packed path, per ξ C_in × C_out.
  WinogradFilters filters_;
  std::vector<float> bias_;  // C_out (zeros when none)
};

}  // namespace meshnn::kernels
