// The one layout op of the project: a contiguous copy of a tensor with its axes reordered (ggml's
// ggml_permute + ggml_cont, torch's x.permute(...).contiguous()). Every layout change between
// channels-first and channels-last, planar and interleaved, goes through it, so no code path
// writes its own index loop. A float64 scalar reference is in tests/ops/permute_test.cc;
// tests/core/one_permute_test.cc fails when a hand-written transpose loop appears in src/.
#pragma once

#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::ops {

// x: any rank ≤ kMaxRank, any dtype → out with out.dim(i) = x.dim(axes[i]) and
// out[i0, …, in] = x[j] where j[axes[k]] = ik (torch's permute). `axes` is a permutation of
// 0 … rank − 1 (negative entries count from the end); anything else is a ShapeError. A pure copy:
// the values are bit-identical. An identity order returns a clone (never shares storage).
Tensor permute(const Tensor& x, const std::vector<int>& axes);

// The wave layouts: planar (…, C, T), each channel a row (how the models return audio and the one
// layout of the API, io::write_wav / read_wav included), and interleaved (…, T, C), one frame of
// C samples after the other (the bytes of a WAV data chunk and of raw PCM).
// (…, C, T) → (…, T, C). rank ≥ 2.
Tensor interleave(const Tensor& planar);
// (…, T, C) → (…, C, T). rank ≥ 2.
Tensor deinterleave(const Tensor& interleaved);

}  // namespace meshnn::ops
