// Communicator: one group of devices (an axis group or the whole mesh) as seen by one member.
// Internal; two backends: local (threads, shared memory, pull-mode copies) and MPI.
//
// Every collective is a pair of calls made by all members in the same order:
//   1. exchange(desc, data): every member contributes a small descriptor (op, shape, dtype,
//      arguments) and gets all of them back, so all members can run the same validation and
//      raise the same error. It is also a barrier: on the local backend `data` is the buffer that
//      peers read directly in the data call that follows (pull mode), and it must be ready.
//   2. a data call (all_gather / reduce_scatter / halo). On the local backend it ends with a
//      barrier, so no peer still reads `data` when the call returns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::mesh_detail {

struct OpDesc {
  int32_t op = 0;
  int32_t rank = 0;  // tensor rank
  int32_t dtype = 0;
  int32_t device = 0;  // mesh rank of the sender
  int64_t shape[kMaxRank] = {};
  int64_t args[12] = {};  // op arguments (dims, pads, axes, ...), compared across devices
};

// A strided set of byte blocks inside a buffer: `count` blocks of `block` bytes, `stride` apart,
// starting at `offset`.
struct Region {
  int64_t offset = 0;
  int64_t count = 0;
  int64_t block = 0;
  int64_t stride = 0;
  bool empty() const { return count == 0 || block == 0; }
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int size() const = 0;
  virtual int index() const = 0;  // this member's coordinate in the group

  virtual std::vector<OpDesc> exchange(const OpDesc& desc, const void* data) = 0;
  virtual void barrier() = 0;

  // src: (outer, chunk) bytes → dst: (outer, size·chunk) bytes, member k's block at k·chunk.
  virtual void all_gather(const void* src, void* dst, int64_t outer, int64_t chunk_bytes) = 0;
  // src: (outer, size, chunk) elements of dtype (f32 | bf16) → dst: (outer, chunk), the sum over
  // members of src[:, index, :], accumulated in f32 in member order 0, 1, …, size−1.
  virtual void reduce_scatter(const void* src, void* dst, DType dtype, int64_t outer,
                              int64_t chunk) = 0;
  // Line (non-periodic) halo exchange inside `buf` (same layout on every member): the block
  // `send_next` of member k−1 lands in `recv_prev` of member k, the block `send_prev` of member
  // k+1 lands in `recv_next` of member k. Regions at the line ends are ignored.
  virtual void halo(void* buf, const Region& send_prev, const Region& send_next,
                    const Region& recv_prev, const Region& recv_next) = 0;

  // Point to point (pipeline hand-over; not collective: only the two members take part).
  // Messages from one member to another arrive in send order. send() is buffered: it copies `t`
  // and returns; while kP2pDepth of its messages to `to` are not yet received it blocks until
  // the oldest is (bounded queue). recv() blocks until the next message from `from` arrives and
  // returns it as an owned tensor of the sender's shape and dtype. Both obey the liveness bound
  // and the mesh's failure propagation (CommError).
  virtual void send(const Tensor& t, int to) = 0;
  virtual Tensor recv(int from) = 0;
};

// Messages one member may have in flight (sent, not yet received) to one peer: a sender runs
// at most this many hand-overs ahead of its receiver (double buffering).
constexpr int kP2pDepth = 2;

// memcpy for collective payloads: copies of at least kStreamCopyBytes bypass the cache with
// non-temporal stores (followed by a store fence, so a later barrier publishes them). Why: a
// payload that large does not stay in cache for its reader anyway, and regular stores first read
// every destination line from memory (read-for-ownership), a third of the DRAM traffic.
constexpr size_t kStreamCopyBytes = size_t{2} << 20;
void bulk_copy(void* dst, const void* src, size_t n);

// Copies a region between two buffers with the same layout.
void copy_region(const void* src, void* dst, const Region& src_region, const Region& dst_region);

}  // namespace meshnn::mesh_detail
