// MpiCommunicator, the Communicator over an MPI communicator, shared by the mpi_*.cc files
// (setup in mpi_comm.cc, liveness in mpi_liveness.cc, collectives and point to point in
// mpi_collectives.cc / mpi_p2p.cc). Only these files include mpi.h.
#pragma once

// C bindings only: the library links MPI::MPI_C, not Open MPI's deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "mesh/communicator.h"

namespace meshnn::mesh_detail {

// BackendError naming `call` and MPI's message unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* call);
// v as an MPI int count; Unsupported (naming `what`) beyond INT_MAX.
int as_int(int64_t v, const char* what);

constexpr int kDescTag = 11;     // descriptor exchange / barrier (point to point, so a timeout
constexpr int kProbeTag = 12;    // knows who did not send), and the liveness probe after a timeout
constexpr int kP2pHeadTag = 13;  // send / recv: the message's descriptor (shape, dtype), then
constexpr int kP2pDataTag = 14;  // its payload (MPI keeps the order of one sender's messages)

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, std::vector<int> mesh_ranks, double timeout);
  ~MpiCommunicator() override;

  int size() const override { return size_; }
  int index() const override { return index_; }

  std::vector<OpDesc> exchange(const OpDesc& desc, const void*) override;
  void barrier() override;
  void all_gather(const void* src, void* dst, int64_t outer, int64_t chunk) override;
  void reduce_scatter(const void* src, void* dst, DType dtype, int64_t outer,
                      int64_t chunk) override;
  void send(const Tensor& t, int to) override;
  Tensor recv(int from) override;
  void halo(void* buf, const Region& send_prev, const Region& send_next, const Region& recv_prev,
            const Region& recv_next) override;

 private:
  // ---- liveness (mpi_liveness.cc) ----
  bool wait_requests(std::vector<MPI_Request>& reqs, const std::vector<int>& peer_of,
                     const std::vector<bool>& is_recv, double timeout, std::vector<int>& silent,
                     bool collective = false);
  std::vector<OpDesc> p2p_gather(const OpDesc& mine, int tag, double timeout, const char* what);
  void wait_collective(MPI_Request& r, const char* what);
  [[noreturn]] void fail(const std::vector<int>& silent, const char* what);
  void check_usable() const;

  // One queued point-to-point send: descriptor + payload copy and their two Issend requests.
  struct P2pSend {
    std::unique_ptr<OpDesc> head;
    Tensor data;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  void reap(std::deque<P2pSend>& q);  // mpi_p2p.cc

  MPI_Comm comm_;
  std::map<int, std::deque<P2pSend>> outbox_;  // peer → sends not yet received, oldest first
  std::vector<int> ranks_;
  double timeout_ = 0;
  bool broken_ = false;
  std::vector<int> last_silent_;
  std::vector<std::shared_ptr<void>> orphans_;  // buffers of requests abandoned at a timeout
  std::vector<MPI_Request> abandoned_;          // collective requests pending at a timeout
  std::vector<float> packed_, out_, recv_;      // reduce_scatter scratch, grown on demand
  int size_ = 0;
  int index_ = 0;
};

}  // namespace meshnn::mesh_detail
