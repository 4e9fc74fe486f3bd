// MiniMax-H3 on a device mesh. The batch items never interact (stereo = two items), so the mesh's
// axis 1 gives each group of items its own devices and those groups never communicate while they
// compute; axis 0 splits time inside each group (the graph's Node::run with a TimeShard: halos
// from the time neighbours, the attention gathering its whole past). A batch that axis 1 cannot
// split evenly (mono on 1x2) is split in time over every axis > 1 instead, as the other models'
// meshes are.
//
//   mesh 1x1: one device;  1x2, B = 2: item 0 on (0, 0), item 1 on (0, 1);
//   2x1: both items on both devices, each device half of the time;  2x2, B = 2: item c on mesh
//   column c, time split over that column's two devices.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "meshnn/core/tensor.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::models::minimax_h3 {

struct MeshSplit {
  int item_parts = 1;          // groups of batch items, one per mesh column (1: not split)
  std::vector<int> time_axes;  // mesh axes splitting time, major first (empty: not split)
  int time_parts = 1;          // devices along the time line
};

// The split of a batch of `batch` items over a rows × cols mesh (rule above).
MeshSplit split_mesh(int rows, int cols, int64_t batch);

// This device's part of a call: `fn(items, ts)` with items = [first, first + count) of the batch
// and ts its time split, returning the whole-time output of those items (B_items, …), the same on
// every device of the time line.
using DevicePart = std::function<Tensor(int64_t first, int64_t count, const TimeShard& ts)>;

// Runs `part` on every device of `mc` (run_spmd) → the whole batch's output (batch, …). Local
// backend: each group's first time device writes its items into the result (no communication
// between groups at all). MPI: the groups' outputs are all-gathered over axis 1 once at the end,
// so every rank returns the whole batch.
Tensor run_split(const MeshConfig& mc, const MeshSplit& split, int64_t batch,
                 const DevicePart& part);

}  // namespace meshnn::models::minimax_h3
