// Chunked runs: a long input run on one device in chunks of input frames with bounded memory,
// each chunk's output computed from windows that hold the whole receptive field of every row it
// keeps, so the result equals the one-shot run to f32 rounding. The windows follow from the
// graphs' reaches (graph::Reach) and one rate geometry, for any chain of stages with a finite
// reach: a single graph (the toy model, BigVGAN) or the LTX decode's mel-VAE (latents → 4T − 3 mel
// frames) followed by its vocoder and bandwidth extension, each stage run on its own window.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "graph/graph.h"
#include "meshnn/core/tensor.h"

namespace meshnn::runtime {

// A chain run in chunks. Stage 0 maps n input frames to rate·n − offset rows (rate = its reach's
// rate, a whole number; 0 ≤ offset < rate), the chain's units: the `offset` missing rows are at the
// start, so frame 0 owns units [0, rate − offset), frame t ≥ 1 units [rate·t − offset, rate·(t + 1)
// − offset), and a window of frames [a, b) gives units [rate·a, rate·b − offset) (its first frame
// drops the same rows the sequence's does). Each later stage runs on a window of units (its input
// rows a whole number per unit) at a whole rate of its own.
struct ChunkChain {
  int64_t offset = 0;
  // Stage 0's reach in input frames, then each later stage's in its own input rows.
  std::vector<graph::Reach> stages;
};

// Each stage's reach in whole rows on each side: stage 0 in input frames, later stages in units.
// A reach may be overstated (a wider window is always exact).
struct StageContext {
  int64_t left = 0, right = 0;
};
std::vector<StageContext> chunk_context(const ChunkChain& chain);

// Chunk k keeps input frames [keep_begin, keep_end), i.e. units [unit_begin, unit_end), and runs
// stage s on the window [start, start + length) of its input: input frames for stage 0, units
// for the later stages (each inside the one before, widest last to first).
struct ChunkWindow {
  struct Span {
    int64_t start = 0, length = 0;
  };
  int64_t keep_begin = 0, keep_end = 0, unit_begin = 0, unit_end = 0;
  std::vector<Span> stages;
};

// The windows of a chunked run over `frames` input frames in chunks of `chunk` (≥ 1): each stage's
// window of the same length in every chunk (at most the whole sequence), shifted inward at the
// sequence ends, where it only gains context; the same shapes each chunk let the storage and plan
// caches reuse the first chunk's. InvalidArgument when a reach is not finite (a causal attention
// reads its whole past) or a rate not a whole number of rows.
std::vector<ChunkWindow> chunk_windows(const ChunkChain& chain, int64_t frames, int64_t chunk);

// Which call of a chunked run: stage `stage` of chunk `chunk` (0-based) of `chunks`.
struct ChunkStep {
  int chunk = 0, chunks = 0, stage = 0;
};

// input: time on `axis` (frames) → the chain's output over the whole input, time on `axis` at
// (units per frame) × (each later stage's rate) rows. run_stage(x, step) runs stage step.stage on
// its window x (time on `axis`) → its output (stage 0 at least rate·n − offset rows, of which the
// first are used; later stages exactly rate rows per input row). progress(k, n, "chunk") after
// chunk k of n.
Tensor run_chunked(const ChunkChain& chain, const Tensor& input, int axis, int64_t chunk,
                   const std::function<Tensor(const Tensor& x, const ChunkStep& step)>& run_stage,
                   const std::function<void(int, int, const char*)>& progress = {});

}  // namespace meshnn::runtime
