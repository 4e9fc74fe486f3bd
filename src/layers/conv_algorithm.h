// Which algorithm runs an f32 Conv1d or Conv2d, chosen once per layer shape (a cost model from
// the measured per-layer tables in docs/benchmarks.md, fixed per layer so every time shard
// agrees); our own kernels behind narrow interfaces so the conv engine (conv_engine.cc) only asks
// "which one?" and "run it".
//
//   direct    kernels/conv1d_direct: register-blocked AVX2 direct convolution (thin layers)
//   winograd  kernels/winograd1d: Toom-Cook F(m, r) tiles, GEMMs per transform point;
//             kernels/winograd2d: F(2×2, 3×3) for 3×3 Conv2d
//   onednn    the engine's oneDNN primitive (nullptr from make_conv1d_algorithm)
//   gemm      kernels/strided_gemm_conv1d: a strided conv as ceil(K / s) GEMMs over s·C_in
//             space-to-depth channels read in place (wide strided layers, wide 2-tap ones)
//   fft       reserved (not implemented: resolves like "winograd")
//
// MESHNN_CONV_ALGO=auto|direct|winograd|gemm|fft|onednn overrides the choice for A/B runs; it is
// read here only, at each layer's construction (so one process can build layers under different
// settings). "direct" is the path without fast algorithms: our direct kernel where it wins and
// oneDNN's direct convolution elsewhere (the behaviour before Winograd). The old
// MESHNN_CONV_DIRECT=0 still means "onednn".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/filter_cache.h"
#include "meshnn/core/precision.h"

namespace meshnn::conv {

enum class Conv1dAlgo { automatic, direct, winograd, gemm, fft, onednn };

// The override from the environment (automatic when unset); InvalidArgument on an unknown value.
Conv1dAlgo conv_algo_override();
const char* to_string(Conv1dAlgo a);

// An f32 1-D convolution layer's geometry (PyTorch conventions: dilation 1 = dense).
struct Conv1dGeometry {
  int64_t c_in = 0, c_out = 0, k = 1, stride = 1, dilation = 1;
  // The layer's precision: only fp32 layers leave the direct kernel for oneDNN on AVX-512 (a bf16
  // layer there would become oneDNN's bf16 conv, which docs/precision.md does not measure).
  Precision precision = Precision::fp32;
};

class Conv1dAlgorithm {
 public:
  virtual ~Conv1dAlgorithm() = default;
  virtual Conv1dAlgo kind() const = 0;
  // Implementation label for benchmarks, e.g. "winograd:F(4,4)x2:avx2".
  virtual std::string name() const = 0;
  // x: (B, T, C_in) dense f32 → y: (B, T_out, C_out) dense f32; output row t reads input rows
  // t·stride + j·dilation − pad_l (zeros outside [0, T): pad_r is implied by T_out).
  // y = conv + bias, or y += conv + bias when accumulate. Const and thread-safe: the weights
  // are read-only (shareable between devices), scratch is thread-local inside the kernels.
  virtual void run(const float* x, int64_t B, int64_t T, int64_t pad_l, float* y, int64_t T_out,
                   bool accumulate) const = 0;
};

// The algorithm for this shape: the override when set, else the cost model below (channels,
// kernel, stride: fixed per layer, so every shard of a time-sharded layer agrees).
Conv1dAlgo choose_conv1d(const Conv1dGeometry& g);

// ---- 2-D: the mel-VAE's 3×3 convolutions (kernels/winograd2d) -----------------------------

struct Conv2dGeometry {
  int64_t c_in = 0, c_out = 0, kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
};

class Conv2dAlgorithm {
 public:
  virtual ~Conv2dAlgorithm() = default;
  virtual std::string name() const = 0;
  // x: (B, H, W, C_in) dense f32 → y: (B, H_out, W_out, C_out); output (i, j) reads input
  // (i + a − pad_h, j + b − pad_w), zeros outside (right / bottom pads implied by H_out, W_out).
  // Same contract as Conv1dAlgorithm::run.
  virtual void run(const float* x, int64_t B, int64_t H, int64_t W, int64_t pad_h, int64_t pad_w,
                   float* y, int64_t H_out, int64_t W_out, bool accumulate) const = 0;
};

// winograd (F(2×2, 3×3)) or onednn for this Conv2d: the override when set ("direct" means the
// path without fast algorithms: oneDNN), else winograd for 3×3 stride-1 undilated layers whose
// channels reach the measured threshold.
Conv1dAlgo choose_conv2d(const Conv2dGeometry& g);
// The Winograd kernel for this layer from PyTorch weights (C_out, C_in, 3, 3) f32 and bias (C_out)
// or nullptr; nullptr for onednn or when it cannot run here (no AVX2, not 3×3 stride 1).
// precision: fp32, or bf16 (Winograd with bf16 GEMM operands, docs/precision.md); nullptr for the
// split modes.
std::unique_ptr<Conv2dAlgorithm> make_conv2d_algorithm(Conv1dAlgo algo, const Conv2dGeometry& g,
                                                       const kernels::FilterWeights& weights,
                                                       const float* bias,
                                                       Precision precision = Precision::fp32);

// Builds `algo` for this layer from PyTorch-layout weights (C_out, C_in, K) f32 and bias (C_out)
// or nullptr (weights transformed / packed here, once; Winograd reads them only on a filter cache
// miss, the other algorithms always). Returns nullptr for onednn, and when the
// algorithm cannot run this layer (e.g. no AVX2). precision bf16: Winograd runs bf16 GEMM operands;
// direct and gemm have no bf16 form and run the layer in f32 (more accurate, and faster than
// oneDNN's bf16 conv with its reorders: docs/precision.md); the split modes return nullptr
// (oneDNN).
std::unique_ptr<Conv1dAlgorithm> make_conv1d_algorithm(Conv1dAlgo algo, const Conv1dGeometry& g,
                                                       const kernels::FilterWeights& weights,
                                                       const float* bias,
                                                       Precision precision = Precision::fp32);

}  // namespace meshnn::conv
