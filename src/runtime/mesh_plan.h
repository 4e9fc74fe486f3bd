// The one mesh plan of the runtime: where a call runs and how its work is split, decided and
// checked before any work.
//
// A call's batch items may never interact (a model that says so: stereo = two items); then the
// mesh's axis 1 gives each group of items its own devices, and those groups never communicate
// while they compute. Time is split over the remaining axes > 1 (the graph's Node::run with a
// TimeShard: halos from the time neighbours). A batch that axis 1 cannot split evenly (mono on
// 1x2), or a model whose items stay together, is split in time over every axis > 1.
//
//   mesh 1x1: one device;  1x2, items split, B = 2: item 0 on (0, 0), item 1 on (0, 1);
//   2x1: every item on both devices, each device half of the time;  2x2, items split, B = 2:
//   item c on mesh column c, time split over that column's two devices.
#pragma once

#include <cstdint>
#include <vector>

#include "meshnn/audio_model.h"
#include "meshnn/mesh/mesh.h"
#include "runtime/scale_rule.h"

namespace meshnn::runtime {

struct MeshSplit {
  int item_parts = 1;          // groups of batch items, one per mesh column (1: not split)
  std::vector<int> time_axes;  // mesh axes splitting time, major first (empty: not split)
  int time_parts = 1;          // devices along the time line
};

// The split of `items` independent batch items (1: none to split) over a rows × cols mesh.
MeshSplit split_mesh(int rows, int cols, int64_t items);

// What a call asks of the mesh.
struct MeshRequest {
  int64_t batch = 1;           // items in the call
  bool split_items = false;    // may the items go to different devices (they never interact)?
  int64_t frames = 0;          // input frames along time, split over the time line
  int64_t min_rows = 1;        // frames each device of the time line needs (Node::min_shard_rows)
  const char* what = "input";  // the input in errors ("latent", "mel", ...)
  // For `--mesh auto` on the mpi backend, the scale-out rule (runtime/scale_rule.h): the cost of
  // one item (the model's: api/measured_cost.h), and the model and the audio seconds per item
  // its messages name.
  CallCost cost;
  const char* kind = "";
  double seconds = 0;
};

struct MeshPlan {
  MeshConfig mesh;
  MeshSplit split;
  int64_t batch = 1;
};

// RunOptions + request → the plan, checked before any work: the thread count, the mesh text, and
// every device of the time line a shard of at least min_rows frames (check_time_split's
// ShapeError). "auto": one device with `threads` OpenMP threads on the local backend; on the mpi
// backend the scale-out rule for `cost` (items first, then time, else replicas).
MeshPlan resolve_mesh(const RunOptions& run, const MeshRequest& request);

// A mesh whose every device runs the whole call (the model splits its own work over the devices,
// e.g. attention heads): no item or time split.
MeshPlan whole_call_on(const MeshConfig& mesh);

}  // namespace meshnn::runtime
