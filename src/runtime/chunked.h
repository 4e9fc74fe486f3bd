// Chunked runs: a long input run on one device in chunks of input frames with bounded memory,
// each chunk's output computed from a window of the input that holds its whole receptive field,
// so the result equals the one-shot run to f32 rounding. The windows follow from the graph's
// reach (graph::Reach), for any model whose graph has a finite reach and a whole number of output
// rows per input frame; a model with another geometry (the LTX decode's ×4 − 3 mel frames) keeps
// its own windows.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/graph.h"
#include "meshnn/core/tensor.h"

namespace meshnn::runtime {

// Chunk k keeps input frames [keep_begin, keep_end) and runs the window [start, start + length).
struct ChunkWindow {
  int64_t keep_begin = 0, keep_end = 0, start = 0, length = 0;
};

// The windows of a chunked run over `frames` input frames in chunks of `chunk` (≥ 1): every
// window the same length (chunk + the reach's whole rows on both sides, at most `frames`), shifted
// inward at the sequence ends, where it only gains context; the same shapes each chunk let the
// storage and plan caches reuse the first chunk's. InvalidArgument when the reach is not finite
// (a causal attention reads its whole past) or the rate is not a whole number of rows.
std::vector<ChunkWindow> chunk_windows(const graph::Reach& reach, int64_t frames, int64_t chunk);

// run_window(start, length) → the graph's output over input frames [start, start + length), time
// on `axis` at reach.rate rows per frame. The kept rows of each window, in order → the whole
// output, `axis` of length rate·frames. progress(k, n, "chunk") after chunk k of n.
Tensor run_chunked(const graph::Reach& reach, int64_t frames, int64_t chunk, int axis,
                   const std::function<Tensor(int64_t start, int64_t length)>& run_window,
                   const std::function<void(int, int, const char*)>& progress = {});

}  // namespace meshnn::runtime
