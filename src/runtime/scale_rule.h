// The scale-out rule of docs/scale_out.md, and what `--mesh auto` on the mpi backend does with
// it. A call on P devices can be split three ways:
//   - by item (stereo channels, batch items): no halos, only the outputs meet once at the end;
//   - by time: every time-sharded layer exchanges halo rows with its neighbours (one round trip
//     on the critical path per layer), which pays off only when the compute it saves beats the
//     link: compute / P + rounds · latency + halo bytes / bandwidth must stay near compute / P;
//   - not at all: run replicas (one process per host, a balancer in front; examples/scale_out).
// Items come first; time only when the predicted efficiency of the split is at least
// kMinTimeSplitEfficiency; otherwise replicas.
#pragma once

#include <cstdint>
#include <string>

#include "meshnn/mesh/mesh.h"

namespace meshnn::runtime {

// A link between the devices of a mesh: bytes per second and one-way latency.
struct LinkProfile {
  std::string name;
  double bytes_per_second = 0;
  double latency_seconds = 0;
};

// "shm" (ranks on one host), "100g" (100 Gb/s, 5 us), "10g" (10 Gb/s, 50 us), "1g" (1 Gb/s,
// 200 us), or "GBITS:MICROSECONDS" (e.g. "25:10") → InvalidArgument otherwise.
LinkProfile parse_link(const std::string& text);

// The link `--mesh auto` assumes on the mpi backend: MESHNN_LINK when set; else "shm" when every
// rank runs on this host (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE = OMPI_COMM_WORLD_SIZE), else
// "10g".
LinkProfile auto_link();

// What a whole call costs: one device's compute (one thread) and, split by time over 2 devices,
// the halo bytes that cross the link (both directions) and the exchanges on the critical path.
struct CallCost {
  double compute_seconds = 0;
  double halo_bytes = 0;
  double rounds = 0;
};

enum class SplitKind { items, time, replicas };

struct ScalePlan {
  SplitKind kind = SplitKind::replicas;
  int parts = 1;
  double time_split_efficiency = 0;  // predicted: compute / (P · time on P devices)
  std::string reason;
};

constexpr double kMinTimeSplitEfficiency = 0.75;

// devices ≥ 1: processes of the mesh; items: independent batch items (1 = none to split).
ScalePlan plan_scale(int devices, int64_t items, const CallCost& cost, const LinkProfile& link);

// `--mesh auto` on the mpi backend: the plan for this launch's ranks (1xN for items or time), or
// InvalidArgument with the plan's reason when it picks replicas. per_item: the cost of one item
// of the call (each model's, api/measured_cost.h); `what` and `seconds` name the call in errors.
MeshConfig auto_mpi_mesh(const std::string& what, double seconds, const CallCost& per_item,
                         int64_t items);

}  // namespace meshnn::runtime
