#include "models/minimax_h3/mesh.h"

#include <cstring>
#include <mutex>

#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"

namespace meshnn::models::minimax_h3 {

MeshSplit split_mesh(int rows, int cols, int64_t batch) {
  MeshSplit s;
  if (cols > 1 && batch % cols == 0) {
    s.item_parts = cols;
    if (rows > 1) s.time_axes = {0};
  } else {
    for (int a = 0; a < 2; ++a)
      if ((a == 0 ? rows : cols) > 1) s.time_axes.push_back(a);
  }
  if (!s.time_axes.empty()) s.time_parts = s.item_parts > 1 ? rows : rows * cols;
  return s;
}

Tensor run_split(const MeshConfig& mc, const MeshSplit& split, int64_t batch,
                 const DevicePart& part) {
  const int64_t per = batch / split.item_parts;
  Tensor out;
  std::mutex mu;
  run_spmd(mc, [&](Device& d) {
    const int group = split.item_parts > 1 ? d.coord(1) : 0;
    const TimeShard ts = split.time_axes.empty() ? TimeShard() : TimeShard(d, split.time_axes);
    Tensor y = part(group * per, per, ts);  // (per, …), whole time
    MESHNN_CHECK(y.dim(0) == per, "internal: a device part returned ", y.dim(0), " items");
    if (mc.backend == Backend::mpi) {
      // One process per device: the groups' items meet once, at the end.
      out = split.item_parts > 1 ? d.ccl().all_gather(y, 0, 1) : y;
      return;
    }
    if (ts.index() != 0) return;  // every device of the line holds the same output
    std::lock_guard<std::mutex> lock(mu);
    if (split.item_parts == 1) {
      out = y;
      return;
    }
    if (!out.defined()) {
      Shape s = y.shape();
      s[0] = batch;
      out = Tensor::empty(s);
    }
    const size_t bytes = static_cast<size_t>(y.numel()) * sizeof(float);
    std::memcpy(out.data<float>() + group * y.numel(), y.data<float>(), bytes);
  });
  return out;
}

}  // namespace meshnn::models::minimax_h3
