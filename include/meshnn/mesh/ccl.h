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
#include <optional>
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

  // Halo padding: equal to padding the global tensor (mode at the true ends
  // only, the group is a line, never a ring) and cutting each device's overlapping window.
  // dims: 1 or 2 entries with one pad_left / pad_right / axis each; 2-D pads dims[0] (H) first
  // and then dims[1] (W) over the H-padded tensor, so corners come from the diagonal neighbour.
  // logical_h > 0: rows of dims[0] with global index ≥ logical_h count as zeros before padding.
  // t_front_pad > 0: that many zero frames prepended on dims[0] − 1 (needs every dim before it
  // to be 1).
  // t: (…, H, W, …) → (…, T + t_front_pad, H + pl0 + pr0, W + pl1 + pr1, …)
  Tensor neighbor_pad(const Tensor& t, const std::vector<int>& dims,
                      const std::vector<int64_t>& pad_left, const std::vector<int64_t>& pad_right,
                      PadMode mode, const std::vector<int>& axes, int64_t t_front_pad = 0,
                      int64_t logical_h = 0, bool persistent = false);

  // Halo-only exchange into a compact buffer, symmetric pads pH = pads[0],
  // pW = pads[1]. dims = {H} or {H, W = H + 1}; the last dim is the channel "stick" C and must
  // come after the padded dims. With outer = Π shape[0 … H−1] and Wd = Π shape[H+1 … rank−2]:
  //   [H-top | H-bot | W-left | W-right], sections stored as
  //   H-top  (outer, pH, Wd) sticks = padded[o, 0 : pH,           pW : pW + W]
  //   H-bot  (outer, pH, Wd) sticks = padded[o, H + pH : H + 2pH, pW : pW + W]
  //   W-left (outer, H + 2pH, pW)   = padded[o, :, 0 : pW]          (spans the H-padded rows)
  //   W-right(outer, H + 2pH, pW)   = padded[o, :, W + pW : W + 2pW]
  // where `padded` is neighbor_pad(t, dims, pads, pads, mode, axes, 0, logical_h).
  // → (total_sticks, C)
  Tensor neighbor_pad_halo_only(const Tensor& t, const std::vector<int>& dims,
                                const std::vector<int64_t>& pads, PadMode mode,
                                const std::vector<int>& axes, int64_t logical_h = 0,
                                bool persistent = false);

  // Writes a compact halo buffer into the border of `padded` (…, H + 2pH, W + 2pW, C) in place.
  // With `interior` (…, H, W, C) given, also copies it into the interior (the fused form, after
  // which `padded` equals neighbor_pad's output). No communication.
  static void halo_scatter(const Tensor& compact, Tensor& padded, int h_dim, int64_t pH, int64_t pW,
                           const Tensor* interior = nullptr);

  // Replicated t: (…, X, …) → (…, X/n, …) chunk coord[axis]; no communication.
  Tensor partition(const Tensor& t, int dim, int axis, bool persistent = false);

  // mesh_dims[a] = tensor dim gathered over mesh axis a (nullopt = not sharded on a); gathers
  // axis 0 then axis 1. Every device receives the full tensor (an all-gather, not a gather to
  // root: model code is SPMD, so every device can go on with the full result).
  Tensor gather_to_host(const Tensor& t, const std::vector<std::optional<int>>& mesh_dims);

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
  // Number of persistent buffers currently held (both halves of every pair).
  size_t pool_buffers() const;

 private:
  struct PoolEntry {
    Tensor buf[2];
    int next = 0;
  };
  Tensor pooled(const std::string& key, const Shape& shape, DType dtype);
  Tensor neighbor_pad_impl(const Tensor& t, const mesh_detail::OpDesc& desc, bool persistent);
  mesh_detail::Communicator* comm(int axis) const;  // null for a group of one
  int axis_index(int axis) const;
  int axis_size(int axis) const;

  Device& device_;
  std::vector<std::shared_ptr<mesh_detail::Communicator>> comms_;
  std::map<std::string, PoolEntry> pool_;
  CclTraffic traffic_;
};

}  // namespace meshnn
