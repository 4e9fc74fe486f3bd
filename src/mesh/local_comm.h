// Local backend: devices are threads of this process, collectives copy through shared memory.
//
// Synchronisation is a spin-then-sleep barrier with a generation counter per group (std::barrier
// costs ~5 µs per phase here). Waiters watch the mesh's abort state: when one
// device fails (its function threw) or a wait exceeds the timeout, every waiting or later
// collective throws CommError naming the failed device and its message.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mesh/communicator.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::mesh_detail {

class LocalMeshState;

// Spin-then-sleep generation barrier for n threads.
class GroupBarrier {
 public:
  explicit GroupBarrier(int n);
  // `me`: the caller's index in `members`. Throws CommError if the mesh aborts, a member is
  // already finished, or the wait exceeds the mesh timeout (naming the members that never came).
  // after_copy: the barrier that ends a collective whose members read each other's buffers in
  // place; every member passed the exchange before it, so each arrives once its own local copy
  // is done, and an abort must not let one leave (and free its buffer) while a peer still reads
  // it: only the timeout ends that wait early.
  void arrive_and_wait(LocalMeshState& st, const std::vector<int>& members, int me,
                       const char* what, bool after_copy = false);
  void wake_all();

 private:
  const int n_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<uint64_t> gen_{0};
  std::atomic<int> sleepers_{0};
  // seen_[i] = g + 1 once member i arrived in generation g: who is missing when a wait times out.
  std::unique_ptr<std::atomic<uint64_t>[]> seen_;
  std::mutex m_;
  std::condition_variable cv_;
};

// Shared state of one group: barrier plus two descriptor / pointer slot sets used alternately
// (a fast member may publish for collective k+1 while a slow one still reads collective k's).
// One direction of point-to-point traffic between two members: a FIFO of owned message tensors,
// at most kP2pDepth long (src/mesh/local_p2p.cc).
struct P2pChannel {
  std::mutex m;
  std::condition_variable cv;
  std::deque<Tensor> q;
  std::atomic<int> size{0};  // q.size(), read without the lock while spinning
};

struct LocalGroup {
  explicit LocalGroup(std::vector<int> members_in);
  std::vector<int> members;  // mesh ranks, in coordinate order
  GroupBarrier barrier;
  std::vector<OpDesc> descs[2];
  std::vector<const void*> ptrs[2];
  std::unique_ptr<P2pChannel[]> p2p;  // [from · size + to], member indices
};

class LocalMeshState {
 public:
  LocalMeshState(const Mesh& mesh, double timeout_seconds);
  const Mesh& mesh() const { return mesh_; }

  // Marks the mesh failed; the first call wins and its error becomes the one rethrown.
  void abort(int device, std::exception_ptr error, const std::string& message);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  // Throws the CommError describing the abort.
  [[noreturn]] void throw_abort(const char* what) const;
  std::exception_ptr first_error() const;

  void set_finished(int device) { finished_[device].store(true, std::memory_order_release); }
  bool finished(int device) const { return finished_[device].load(std::memory_order_acquire); }
  double timeout_seconds() const { return timeout_; }

  // groups: axis 0 (one per mesh column), axis 1 (one per mesh row), the whole mesh.
  LocalGroup& group_of(int rank, int axis);  // axis 0, 1 or 2 (= whole mesh)

 private:
  Mesh mesh_;
  double timeout_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex mu_;
  int failed_device_ = -1;
  std::string failed_message_;
  std::exception_ptr first_error_;
  std::unique_ptr<std::atomic<bool>[]> finished_;
  std::vector<std::unique_ptr<LocalGroup>> axis0_, axis1_;
  std::unique_ptr<LocalGroup> world_;
};

// Point-to-point on the local backend (Communicator::send / recv): `me`, `to`, `from` are member
// indices in `g`; `what` names the group in errors.
void local_p2p_send(LocalMeshState& st, LocalGroup& g, int me, int to, const Tensor& t,
                    const std::string& what);
Tensor local_p2p_recv(LocalMeshState& st, LocalGroup& g, int me, int from, const std::string& what);

// Communicator of `rank` on axis 0 / 1 / 2 (whole mesh).
std::shared_ptr<Communicator> make_local_comm(std::shared_ptr<LocalMeshState> state, int rank,
                                              int axis);

}  // namespace meshnn::mesh_detail
