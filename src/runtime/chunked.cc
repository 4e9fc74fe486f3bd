#include "runtime/chunked.h"

#include <algorithm>
#include <cstring>

#include "meshnn/core/error.h"

namespace meshnn::runtime {

std::vector<ChunkWindow> chunk_windows(const graph::Reach& reach, int64_t frames, int64_t chunk) {
  MESHNN_CHECK_AS(InvalidArgument, chunk >= 1, "chunks of ", chunk, " frames; need at least 1");
  MESHNN_CHECK_AS(InvalidArgument, frames >= 1, "a chunked run of ", frames, " frames");
  MESHNN_CHECK_AS(
      InvalidArgument,
      reach.left < graph::Rows(graph::kWholePast) && reach.right < graph::Rows(graph::kWholePast),
      "the graph reads its whole past (a causal attention): it cannot run in chunks");
  MESHNN_CHECK_AS(InvalidArgument, reach.rate.den == 1 && reach.rate.num >= 1, "the graph gives ",
                  reach.rate.num, "/", reach.rate.den,
                  " output rows per input frame: chunks need a whole number");
  // Output row o (aligned with input frame o / rate) reads frames [o / rate − left, o / rate +
  // right]: a chunk [a, b) needs [a − ⌈left⌉, b + ⌈right⌉) (⌈right⌉ ≥ the last row's reach).
  const int64_t left = reach.left.ceil(), right = reach.right.ceil();
  const int64_t length = std::min(frames, chunk + left + right);
  std::vector<ChunkWindow> out;
  for (int64_t a = 0; a < frames; a += chunk) {
    ChunkWindow w;
    w.keep_begin = a;
    w.keep_end = std::min(frames, a + chunk);
    w.length = length;
    w.start = std::clamp<int64_t>(a - left, 0, frames - length);
    MESHNN_CHECK(w.start <= std::max<int64_t>(0, a - left) &&
                     w.start + length >= std::min(frames, w.keep_end + right),
                 "internal: chunk window [", w.start, ", ", w.start + length, ") misses context");
    out.push_back(w);
  }
  return out;
}

Tensor run_chunked(const graph::Reach& reach, int64_t frames, int64_t chunk, int axis,
                   const std::function<Tensor(int64_t, int64_t)>& run_window,
                   const std::function<void(int, int, const char*)>& progress) {
  const std::vector<ChunkWindow> windows = chunk_windows(reach, frames, chunk);
  const int64_t rate = reach.rate.num;
  Tensor out;
  int64_t outer = 0, inner = 0;  // out viewed as (outer, rate·frames, inner)
  const int n = static_cast<int>(windows.size());
  for (int k = 0; k < n; ++k) {
    const ChunkWindow& w = windows[k];
    const Tensor y = run_window(w.start, w.length);
    MESHNN_CHECK(axis < y.rank() && y.dim(axis) == rate * w.length, "internal: a window of ",
                 w.length, " frames gave ", shape_str(y.shape()), ", not ", rate * w.length,
                 " rows on axis ", axis);
    if (!out.defined()) {
      Shape s = y.shape();
      s[static_cast<size_t>(axis)] = rate * frames;
      out = Tensor::empty(s, y.dtype());
      outer = shape_numel(Shape(s.begin(), s.begin() + axis));
      inner = shape_numel(Shape(s.begin() + axis + 1, s.end()));
    }
    // Rows [rate·(keep_begin − start), rate·(keep_end − start)) of the window → rows
    // [rate·keep_begin, rate·keep_end) of the output.
    const int64_t rows = rate * (w.keep_end - w.keep_begin), from = rate * (w.keep_begin - w.start);
    const size_t es = dtype_size(y.dtype());
    const char* src = static_cast<const char*>(y.raw());
    char* dst = static_cast<char*>(out.raw());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + ((o * rate * frames + rate * w.keep_begin) * inner) * es,
                  src + ((o * y.dim(axis) + from) * inner) * es,
                  static_cast<size_t>(rows * inner) * es);
    if (progress) progress(k + 1, n, "chunk");
  }
  return out;
}

}  // namespace meshnn::runtime
