// MpiCommunicator's liveness: requests polled against the timeout, the point-to-point descriptor
// exchange (so a timeout knows who did not send), the probe after a stuck collective, the error.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "mesh/mpi_communicator.h"
#include "meshnn/core/error.h"

namespace meshnn::mesh_detail {

std::vector<OpDesc> MpiCommunicator::exchange(const OpDesc& desc, const void*) {
  return p2p_gather(desc, kDescTag, timeout_, "descriptor exchange");
}

void MpiCommunicator::barrier() { p2p_gather(OpDesc{}, kDescTag, timeout_, "barrier"); }

// Polls `reqs` until all complete (true) or `timeout` seconds pass (0 = forever; false). On a
// timeout `silent` gets the group indices (peer_of, −1 = unknown) of the requests still pending.
// Pending point-to-point requests are released (receives cancelled first); a pending collective
// request cannot be cancelled or freed (MPI forbids it) and is kept, never waited on again.
bool MpiCommunicator::wait_requests(std::vector<MPI_Request>& reqs, const std::vector<int>& peer_of,
                                    const std::vector<bool>& is_recv, double timeout,
                                    std::vector<int>& silent, bool collective) {
  check_usable();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  for (long polls = 0;; ++polls) {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (done) return true;
    // Spin first (a peer is usually microseconds away), then back off so that a waiting rank
    // does not steal the core of an oversubscribed peer.
    if (polls > 20000)
      std::this_thread::sleep_for(std::chrono::microseconds(polls > 100000 ? 500 : 50));
    if (timeout > 0 && std::chrono::duration<double>(clock::now() - start).count() > timeout) break;
  }
  silent.clear();
  // A process that was itself stopped past the deadline finds everything done on waking.
  int all_done = 0;
  MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &all_done, MPI_STATUSES_IGNORE);
  if (all_done) return true;
  for (size_t i = 0; i < reqs.size(); ++i) {
    // MPI_Testall completes nothing unless everything completed: test each one.
    int flag = 0;
    if (reqs[i] != MPI_REQUEST_NULL) MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    if (peer_of[i] >= 0 && std::find(silent.begin(), silent.end(), peer_of[i]) == silent.end())
      silent.push_back(peer_of[i]);
    if (collective) {
      abandoned_.push_back(reqs[i]);
      continue;
    }
    // A cancelled receive cannot land late in a buffer its caller has freed.
    if (i < is_recv.size() && is_recv[i]) MPI_Cancel(&reqs[i]);
    MPI_Request_free(&reqs[i]);
  }
  std::sort(silent.begin(), silent.end());
  return false;
}

// Every member sends `mine` to every other member and receives theirs, point to point, so that
// at a timeout the missing senders are known. The receive buffers stay alive after a timeout
// (a late sender's message may still land in them).
std::vector<OpDesc> MpiCommunicator::p2p_gather(const OpDesc& mine, int tag, double timeout,
                                                const char* what) {
  auto all = std::make_shared<std::vector<OpDesc>>(size_);
  auto send = std::make_shared<OpDesc>(mine);
  (*all)[index_] = mine;
  std::vector<MPI_Request> reqs;
  std::vector<int> peer_of;
  std::vector<bool> is_recv;
  for (int k = 0; k < size_; ++k) {
    if (k == index_) continue;
    reqs.emplace_back();
    peer_of.push_back(k);
    is_recv.push_back(true);
    check_mpi(MPI_Irecv(&(*all)[k], sizeof(OpDesc), MPI_BYTE, k, tag, comm_, &reqs.back()),
              "MPI_Irecv");
  }
  for (int k = 0; k < size_; ++k) {
    if (k == index_) continue;
    reqs.emplace_back();
    peer_of.push_back(k);  // a send pending this long: k never posted its receive
    is_recv.push_back(false);
    check_mpi(MPI_Isend(send.get(), sizeof(OpDesc), MPI_BYTE, k, tag, comm_, &reqs.back()),
              "MPI_Isend");
  }
  std::vector<int> silent;
  if (!wait_requests(reqs, peer_of, is_recv, timeout, silent)) {
    orphans_.push_back(all);
    orphans_.push_back(send);
    fail(silent, what);
  }
  return *all;
}

// A collective (no per-peer view): on timeout, ask every member who is alive, with a short
// grace for members that reached the deadline a little later, and name those who do not answer.
void MpiCommunicator::wait_collective(MPI_Request& r, const char* what) {
  std::vector<MPI_Request> reqs{r};
  std::vector<int> unknown;
  if (wait_requests(reqs, {-1}, {}, timeout_, unknown, true)) return;
  // The collective's buffers belong to the caller; after this the communicator is unusable
  // and the job is expected to end (the CLI aborts it).
  OpDesc probe;
  probe.op = -1;
  std::vector<int> silent;
  try {
    p2p_gather(probe, kProbeTag, std::min(std::max(1.0, timeout_ / 10), 10.0), "liveness probe");
  } catch (const CommError&) {
    silent = last_silent_;
  }
  fail(silent, what);
}

void MpiCommunicator::fail(const std::vector<int>& silent, const char* what) {
  broken_ = true;
  last_silent_ = silent;
  std::string who;
  for (int k : silent) who += detail::concat(who.empty() ? "" : ", ", ranks_[k]);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  throw CommError(detail::concat(
      "MPI rank ", world, " (mesh rank ", ranks_[index_], "): liveness timeout, no progress for ",
      timeout_, " s in ", what, "; ",
      who.empty()
          ? std::string(
                "every member answered the liveness probe, so the collective itself is stuck")
          : detail::concat("silent mesh rank(s): ", who),
      " (the bound is MeshConfig::timeout_seconds or MESHNN_COMM_TIMEOUT)"));
}

void MpiCommunicator::check_usable() const {
  if (broken_)
    throw CommError("MPI communicator unusable after a liveness timeout (the job must end)");
}

}  // namespace meshnn::mesh_detail
