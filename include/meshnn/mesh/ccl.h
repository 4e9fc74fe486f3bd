// CclManager: the collectives that model code calls on a device of a mesh. Semantics and the
// persistent ping-pong buffers: docs/mesh.md.
//
// Every op runs independently in each group along `axis` (0 or 1). A collective on an axis of
// extent 1 is a no-op (all_gather / reduce_scatter return the input unchanged; neighbor_pad only
// applies the edge rule locally) and no communication code runs. Negative dims count from the end;
// tensors of rank 1..6.
//
// Bad input (dim out of range, uneven split, pad larger than the shard, different shapes / dtypes /
// op arguments on different devices) raises ShapeError / InvalidArgument on EVERY device of the
// group: devices first exchange a small descriptor and all evaluate the same checks, so none is
// left waiting. A nonexistent axis is rejected locally with InvalidArgument before any exchange.
//
// Persistent forms (`persistent = true`): the output comes from a double-buffered pool keyed by
// (op, shape, dim, axis, dtype, op arguments); two consecutive calls with the same key return
// distinct buffers and the third reuses the first, so a result stays valid until the second
// following call of the same key. reset() drops the pools.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn {

class Device;
namespace mesh_detail {
class Communicator;
struct OpDesc;
}  // namespace mesh_detail

enum class PadMode { zeros, replicate };

// What one device received from its peers, per kind of collective, since the last reset: counted
// from the regions the transport copies (docs/scale_out.md checks the graph's exchange account
// against it). Point-to-point counts what this device sent.
struct CclTraffic {
  int64_t halo_calls = 0, halo_bytes = 0;      // neighbor_pad (one call per time-sharded layer)
  int64_t gather_calls = 0, gather_bytes = 0;  // all_gather
  int64_t p2p_sends = 0, p2p_bytes = 0;        // send
};

class CclManager {
 public:
  CclManager(Device& device, std::vector<std::shared_ptr<mesh_detail::Communicator>> comms);
  ~CclManager();

  // t: (…, X, …) → (…, X·n, …): concat of the group's tensors along dim, in coordinate order.
  Tensor all_gather(const Tensor& t, int dim, int axis, bool persistent = false);

  // t: (…, X, …) → (…, X/n, …): elementwise sum over the group (f32 accumulation, added in
  // device-index order, also for bf16 inputs), device i keeps chunk i along dim.
  Tensor reduce_scatter(const Tensor& t, int dim, int axis, bool persistent = false);

  // Halo padding along one dim of a tensor time-sharded over mesh axis `axis`: equal to padding
  // the global tensor (mode at the true ends only, the group is a line, never a ring) and cutting
  // each device's overlapping window.
  // t: (…, S, …) → (…, pad_left + S + pad_right, …)
  Tensor neighbor_pad(const Tensor& t, int dim, int64_t pad_left, int64_t pad_right, PadMode mode,
                      int axis, bool persistent = false);

  // axis 0 / 1, or -1 for the whole mesh.
  void barrier(int axis = -1);

  // Point-to-point hand-over for pipeline parallelism (stage k → stage k+1): between two devices
  // of this device's group along `axis` (0 / 1; −1 = the whole mesh, peers named by mesh rank);
  // `to` / `from` are coordinates on that axis. Only the two devices take part. Rules
  // (docs/mesh.md, "Point to point"):
  //   - the messages from one device to another arrive in send order; shape and dtype travel
  //     with them, so recv() allocates its result (an owned tensor);
  //   - send() is buffered: it copies t and returns while fewer than 2 of its messages to `to`
  //     are unreceived, else it first waits until the receiver takes the oldest (queue depth 2:
  //     the sender may run up to two hand-overs ahead of its receiver);
  //   - waits obey the liveness bound and the mesh's failure propagation (CommError naming the
  //     silent, failed or finished peer).
  // InvalidArgument (local, nothing sent): no such axis, an axis of extent 1, a peer out of
  // range or equal to this device, rank above 6.
  // t: any shape / dtype → recv on `to`: the same shape / dtype / bytes
  void send(const Tensor& t, int to, int axis);
  Tensor recv(int from, int axis);

  // Drops every persistent buffer.
  void reset();
  const CclTraffic& traffic() const { return traffic_; }
  void reset_traffic() { traffic_ = {}; }

 private:
  struct PoolEntry {
    Tensor buf[2];
    int next = 0;
  };
  Tensor pooled(const std::string& key, const Shape& shape, DType dtype);
  mesh_detail::Communicator* comm(int axis) const;  // null for a group of one
  int axis_index(int axis) const;
  int axis_size(int axis) const;

  Device& device_;
  std::vector<std::shared_ptr<mesh_detail::Communicator>> comms_;
  std::map<std::string, PoolEntry> pool_;
  CclTraffic traffic_;
};

}  // namespace meshnn
