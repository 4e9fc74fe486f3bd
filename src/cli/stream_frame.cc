#include "cli/stream_frame.h"

#include "meshnn/core/error.h"
#include "meshnn/io/stream_io.h"

namespace meshnn::cli {

StreamFrame stream_frame(const AudioIoSpec& spec, int64_t items, const std::string& option) {
  const size_t rank = spec.shape.size();
  MESHNN_CHECK_AS(InvalidArgument, (rank == 3 || rank == 4) && spec.time_axis == 2, "a stream of ",
                  spec.what, " ", spec.layout(),
                  ": frames are defined for (B, C, T) and (B, C, T, F) inputs");
  const bool free_batch = spec.shape[0] < 0;
  const int64_t most = free_batch ? kMaxBatchItems : spec.shape[0];
  MESHNN_CHECK_AS(InvalidArgument, items >= 1 && items <= most, option, " ", items, ": the ",
                  spec.what, " ", spec.layout(), " takes ",
                  free_batch ? detail::concat("1 to ", most, " items") : std::string("one item"),
                  " per frame");
  StreamFrame f;
  f.items = items;
  f.channels = spec.shape[1];
  f.freq = rank == 4 ? spec.shape[3] : 1;
  f.per_item = f.channels * f.freq;
  return f;
}

Tensor StreamFrame::to_input(const Tensor& frames) const {
  MESHNN_CHECK_AS(ShapeError, frames.defined() && frames.rank() == 2 && frames.dim(1) == size(),
                  "stream frames: expected (n, ", size(), "), got ",
                  frames.defined() ? shape_str(frames.shape()) : "undefined");
  const int64_t n = frames.dim(0);
  // Item-major values: item b's channel c is row b·C + c of the transposed frames.
  if (freq == 1) return io::frames_to_mel(frames).reshape({items, channels, n});
  return io::frames_to_latent(frames, items * channels, freq).reshape({items, channels, n, freq});
}

Tensor StreamFrame::as_planar(const Tensor& y) {
  MESHNN_CHECK_AS(ShapeError, y.defined() && y.rank() == 3, "stream output: expected (B, C, m)");
  return y.reshape({1, y.dim(0) * y.dim(1), y.dim(2)});
}

std::string StreamFrame::describe() const {
  return detail::concat(items, items == 1 ? " item" : " items", " × ", per_item,
                        " float32 values = ", size() * 4, " bytes");
}

}  // namespace meshnn::cli
