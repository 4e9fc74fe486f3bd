#include "runtime/executor.h"

#include <cstring>

#include "meshnn/mesh/ccl.h"

namespace meshnn::runtime {

int64_t first_item(Device& d, const MeshSplit& split, int64_t count) {
  return split.item_parts > 1 ? d.coord(1) * count : 0;
}

TimeShard time_shard(Device& d, const MeshSplit& split) {
  return split.time_axes.empty() ? TimeShard() : TimeShard(d, split.time_axes);
}

void Gather::add(Device& d, const TimeShard& ts, const Tensor& y) {
  const int parts = plan_.split.item_parts;
  const int64_t per = plan_.batch / parts;
  MESHNN_CHECK(parts == 1 || y.dim(0) == per, "internal: a device part returned ", y.dim(0),
               " items");
  if (plan_.mesh.backend == Backend::mpi) {
    // One process per device: the groups' items meet once, at the end.
    out_ = parts > 1 ? d.ccl().all_gather(y, 0, 1) : y;
    return;
  }
  if (parts == 1) {
    if (d.rank() == 0) out_ = y;  // every device of the time line holds the same output
    return;
  }
  if (ts.index() != 0) return;  // likewise within each item group
  std::lock_guard<std::mutex> lock(mu_);
  if (!out_.defined()) {
    Shape s = y.shape();
    s[0] = plan_.batch;
    out_ = Tensor::empty(s);
  }
  const size_t bytes = static_cast<size_t>(y.numel()) * sizeof(float);
  std::memcpy(out_.data<float>() + d.coord(1) * y.numel(), y.data<float>(), bytes);
}

}  // namespace meshnn::runtime
