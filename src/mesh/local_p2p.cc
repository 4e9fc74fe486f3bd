// Point-to-point hand-over on the local backend: one bounded FIFO per (sender, receiver) pair of
// a group. send() waits for room (at most kP2pDepth queued), copies the tensor into a fresh
// owned buffer and queues it; recv() waits for a message and takes the sender's copy (no second
// copy). Waits spin briefly, then sleep on the channel's condition variable in 20 ms slices,
// checking the mesh's abort state, the peer's "finished" flag and the liveness bound, like the
// group barrier of local_comm.cc.
#include <chrono>
#include <thread>

#include "mesh/local_comm.h"
#include "meshnn/core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MESHNN_P2P_PAUSE() _mm_pause()
#else
#define MESHNN_P2P_PAUSE() std::this_thread::yield()
#endif

namespace meshnn::mesh_detail {

namespace {

std::string dev(const LocalMeshState& st, int rank) {
  return detail::concat("device ", rank, " (", st.mesh().coord(rank, 0), ", ",
                        st.mesh().coord(rank, 1), ")");
}

// Waits until ready() (checked under ch.m; `spin_ready` is a lock-free hint) or throws CommError:
// mesh aborted, the peer's function returned while we wait for it, or no progress for the
// liveness bound. `what` describes the wait ("recv from device 1 (0, 1)").
template <class SpinReady, class Ready>
std::unique_lock<std::mutex> wait_for(LocalMeshState& st, P2pChannel& ch, int peer_rank,
                                      const std::string& what, const char* peer_gone,
                                      SpinReady spin_ready, Ready ready) {
  for (int i = 0; i < 4000 && !spin_ready(); ++i) MESHNN_P2P_PAUSE();
  for (int i = 0; i < 50 && !spin_ready(); ++i) std::this_thread::yield();
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const double timeout = st.timeout_seconds();
  std::unique_lock<std::mutex> lk(ch.m);
  for (;;) {
    if (ready()) return lk;
    if (st.aborted()) {
      lk.unlock();
      st.throw_abort(what.c_str());
    }
    if (st.finished(peer_rank)) {
      // Checked under the lock after ready(): a peer queues (or takes) before it finishes.
      const std::string msg = detail::concat(dev(st, peer_rank), " finished its function while ",
                                             what, " waits: ", peer_gone);
      lk.unlock();
      st.abort(peer_rank, std::make_exception_ptr(CommError(msg)), msg);
      st.throw_abort(what.c_str());
    }
    if (timeout > 0 && std::chrono::duration<double>(clock::now() - start).count() > timeout) {
      const std::string msg = detail::concat(
          "liveness timeout, no progress for ", timeout, " s in ", what, ": ", dev(st, peer_rank),
          " is silent (the liveness bound is MeshConfig::timeout_seconds or MESHNN_COMM_TIMEOUT)");
      lk.unlock();
      st.abort(-1, std::make_exception_ptr(CommError(msg)), msg);
      st.throw_abort(what.c_str());
    }
    ch.cv.wait_for(lk, std::chrono::milliseconds(20));
  }
}

void check_peer(const LocalGroup& g, int me, int peer, const char* op) {
  const int n = static_cast<int>(g.members.size());
  MESHNN_CHECK(peer >= 0 && peer < n && peer != me, op, ": peer ", peer,
               " is not another member of this group of ", n, " (this device is member ", me, ")");
}

}  // namespace

void local_p2p_send(LocalMeshState& st, LocalGroup& g, int me, int to, const Tensor& t,
                    const std::string& group) {
  check_peer(g, me, to, "send");
  const int n = static_cast<int>(g.members.size());
  P2pChannel& ch = g.p2p[me * n + to];
  const std::string what = detail::concat("send from ", dev(st, g.members[me]), " to ",
                                          dev(st, g.members[to]), " (", group, ")");
  // Room first, then the copy: a blocked sender holds no extra buffer.
  auto room = [&] { return ch.size.load(std::memory_order_acquire) < kP2pDepth; };
  wait_for(st, ch, g.members[to], what, "it never received the queued messages", room, room)
      .unlock();
  Tensor msg = Tensor::empty(t.shape(), t.dtype());
  if (t.nbytes()) bulk_copy(msg.raw(), t.raw(), t.nbytes());
  {
    std::lock_guard<std::mutex> lk(ch.m);
    ch.q.push_back(std::move(msg));
    ch.size.store(static_cast<int>(ch.q.size()), std::memory_order_release);
  }
  ch.cv.notify_all();
}

Tensor local_p2p_recv(LocalMeshState& st, LocalGroup& g, int me, int from,
                      const std::string& group) {
  check_peer(g, me, from, "recv");
  const int n = static_cast<int>(g.members.size());
  P2pChannel& ch = g.p2p[from * n + me];
  const std::string what = detail::concat("recv on ", dev(st, g.members[me]), " from ",
                                          dev(st, g.members[from]), " (", group, ")");
  auto has = [&] { return ch.size.load(std::memory_order_acquire) > 0; };
  auto lk = wait_for(st, ch, g.members[from], what, "it sent nothing more", has,
                     [&] { return !ch.q.empty(); });
  Tensor msg = std::move(ch.q.front());
  ch.q.pop_front();
  ch.size.store(static_cast<int>(ch.q.size()), std::memory_order_release);
  lk.unlock();
  ch.cv.notify_all();
  return msg;
}

}  // namespace meshnn::mesh_detail
