// The MPI communicator. Long (~630 lines): every point-to-point and collective path carries its
// liveness bound (MESHNN_COMM_TIMEOUT) and its error text.
#include "mesh/mpi_comm.h"

// C bindings only: the library links MPI::MPI_C, not Open MPI's deprecated C++ bindings.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <thread>

#include "meshnn/core/bf16.h"
#include "meshnn/core/error.h"

namespace meshnn::mesh_detail {

namespace {

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char buf[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, buf, &len);
    throw BackendError(detail::concat(call, " failed: ", std::string(buf, len)));
  }
}

int as_int(int64_t v, const char* what) {
  if (v > INT_MAX || v < 0)
    throw Unsupported(detail::concat("MPI backend: ", what, " of ", v, " exceeds an int count"));
  return static_cast<int>(v);
}

void ensure_init() {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  }
}

// Byte datatype for a Region (count blocks of `block` bytes, `stride` apart).
struct RegionType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  explicit RegionType(const Region& r) {
    check_mpi(
        MPI_Type_create_hvector(as_int(r.count, "halo block count"),
                                as_int(r.block, "halo block bytes"), r.stride, MPI_BYTE, &type),
        "MPI_Type_create_hvector");
    check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  }
  ~RegionType() {
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

constexpr int kDescTag = 11;     // descriptor exchange / barrier (point to point, so a timeout
constexpr int kProbeTag = 12;    // knows who did not send), and the liveness probe after a timeout
constexpr int kP2pHeadTag = 13;  // send / recv: the message's descriptor (shape, dtype), then
constexpr int kP2pDataTag = 14;  // its payload (MPI keeps the order of one sender's messages)

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm comm, std::vector<int> mesh_ranks, double timeout)
      : comm_(comm), ranks_(std::move(mesh_ranks)), timeout_(timeout) {
    MPI_Comm_size(comm_, &size_);
    MPI_Comm_rank(comm_, &index_);
  }
  ~MpiCommunicator() override {
    int fin = 0;
    MPI_Finalized(&fin);
    // Sends never received: their requests are released (MPI completes them if a receive ever
    // matches) and their buffers deliberately leaked, since MPI may still read them.
    for (auto& [peer, q] : outbox_)
      for (P2pSend& e : q) {
        int done = 0;
        if (!fin) MPI_Testall(2, e.req, &done, MPI_STATUSES_IGNORE);
        if (done) continue;
        for (MPI_Request& r : e.req)
          if (!fin && r != MPI_REQUEST_NULL) MPI_Request_free(&r);
        new P2pSend(std::move(e));  // NOLINT: intentional leak
      }
    if (!fin) MPI_Comm_free(&comm_);
  }

  int size() const override { return size_; }
  int index() const override { return index_; }
  int mesh_rank(int i) const override { return ranks_[i]; }

  std::vector<OpDesc> exchange(const OpDesc& desc, const void*) override {
    return p2p_gather(desc, kDescTag, timeout_, "descriptor exchange");
  }

  void barrier() override { p2p_gather(OpDesc{}, kDescTag, timeout_, "barrier"); }

  std::shared_ptr<Communicator> split(int color, int key) override {
    OpDesc d;
    d.op = kSplitOp;
    d.args[0] = color;
    d.args[1] = key;
    std::vector<int> ranks;
    for (int i : split_members(exchange(d, nullptr), color)) ranks.push_back(ranks_[i]);
    MPI_Comm sub;
    check_mpi(MPI_Comm_split(comm_, color, key, &sub), "MPI_Comm_split");
    if (ranks.size() < 2) {
      MPI_Comm_free(&sub);
      return nullptr;
    }
    return std::make_shared<MpiCommunicator>(sub, std::move(ranks), timeout_);
  }

  void all_gather(const void* src, void* dst, int64_t outer, int64_t chunk) override {
    const int send = as_int(outer * chunk, "all_gather bytes per device");
    if (outer == 1) {
      MPI_Request r;
      check_mpi(MPI_Iallgather(src, send, MPI_BYTE, dst, send, MPI_BYTE, comm_, &r),
                "MPI_Iallgather");
      wait_collective(r, "all_gather");
      return;
    }
    // Each member's (outer, chunk) block lands strided: a vector type resized to extent `chunk`.
    MPI_Datatype vec, rtype;
    check_mpi(MPI_Type_vector(as_int(outer, "outer"), as_int(chunk, "chunk"),
                              as_int(chunk * size_, "row"), MPI_BYTE, &vec),
              "MPI_Type_vector");
    check_mpi(MPI_Type_create_resized(vec, 0, chunk, &rtype), "MPI_Type_create_resized");
    MPI_Type_commit(&rtype);
    MPI_Request r;
    const int rc = MPI_Iallgather(src, send, MPI_BYTE, dst, 1, rtype, comm_, &r);
    MPI_Type_free(&rtype);  // freeing a type in use by a pending request is allowed
    MPI_Type_free(&vec);
    check_mpi(rc, "MPI_Iallgather");
    wait_collective(r, "all_gather");
  }

  void reduce_scatter(const void* src, void* dst, DType dtype, int64_t outer,
                      int64_t chunk) override {
    const int n = size_;
    const int64_t per = outer * chunk;  // elements each member keeps
    const int cnt = as_int(per, "reduce_scatter elements per device");
    std::vector<int> counts(n, cnt);
    // Fast path: f32 with the scatter dim outermost is already in MPI's (n, per) layout.
    if (n == 2 && dtype == DType::f32 && outer == 1) {
      MPI_Request r;
      check_mpi(MPI_Ireduce_scatter(src, dst, counts.data(), MPI_FLOAT, MPI_SUM, comm_, &r),
                "MPI_Ireduce_scatter");
      wait_collective(r, "reduce_scatter");
      return;
    }
    // Pack (outer, n, chunk) → (n, outer, chunk) in f32: MPI scatters contiguous blocks and has
    // no bf16 type. Scratch is kept across calls (fresh pages cost more than the copy).
    packed_.resize(static_cast<size_t>(per) * n);
    out_.resize(static_cast<size_t>(per));
    float* packed = packed_.data();
    for (int k = 0; k < n; ++k)
      for (int64_t o = 0; o < outer; ++o) {
        float* y = packed + k * per + o * chunk;
        const int64_t off = (o * n + k) * chunk;
        if (dtype == DType::f32) {
          std::memcpy(y, static_cast<const float*>(src) + off, chunk * sizeof(float));
        } else {
          const bf16* x = static_cast<const bf16*>(src) + off;
          for (int64_t e = 0; e < chunk; ++e) y[e] = to_f32(x[e]);
        }
      }
    float* out = dtype == DType::f32 ? static_cast<float*>(dst) : out_.data();
    if (n == 2) {
      // Two terms: one f32 add per element, commutative, so bit-identical to the local backend's
      // x0 + x1. MPI_Reduce_scatter, not _block: the latter is 7–20× slower in Open MPI 4.1.
      MPI_Request r;
      check_mpi(MPI_Ireduce_scatter(packed, out, counts.data(), MPI_FLOAT, MPI_SUM, comm_, &r),
                "MPI_Ireduce_scatter");
      wait_collective(r, "reduce_scatter");
    } else {
      // Open MPI may associate three or more terms in any order; to stay bit-identical with
      // ((x0 + x1) + x2) + … we move the chunks with an all-to-all and add them in member order.
      recv_.resize(static_cast<size_t>(per) * n);
      MPI_Request r;
      check_mpi(MPI_Ialltoall(packed, cnt, MPI_FLOAT, recv_.data(), cnt, MPI_FLOAT, comm_, &r),
                "MPI_Ialltoall");
      wait_collective(r, "reduce_scatter (all-to-all)");
      std::memcpy(out, recv_.data(), per * sizeof(float));
      for (int k = 1; k < n; ++k) {
        const float* x = recv_.data() + k * per;
        for (int64_t e = 0; e < per; ++e) out[e] += x[e];
      }
    }
    if (dtype != DType::f32) {
      bf16* y = static_cast<bf16*>(dst);
      for (int64_t e = 0; e < per; ++e) y[e] = to_bf16(out[e]);
    }
  }

  // Synchronous-mode sends (MPI_Issend): a send request completes only once the receiver has
  // matched it, so "not completed" means "not yet received" and the queue bound is exact. The
  // payload is copied first (buffered semantics: the caller may reuse its tensor at once).
  void send(const Tensor& t, int to) override {
    check_usable();
    MESHNN_CHECK(to >= 0 && to < size_ && to != index_, "send: peer ", to,
                 " is not another member of this group of ", size_, " (this device is member ",
                 index_, ")");
    auto& q = outbox_[to];
    reap(q);
    while (static_cast<int>(q.size()) >= kP2pDepth) {
      P2pSend& e = q.front();
      std::vector<MPI_Request> reqs(e.req, e.req + 2);
      std::vector<int> silent;
      if (!wait_requests(reqs, {to, to}, {false, false}, timeout_, silent)) {
        orphans_.push_back(std::make_shared<P2pSend>(std::move(e)));  // MPI may still read it
        q.pop_front();
        fail(silent, "send (the receiver did not take the oldest queued message)");
      }
      q.pop_front();
    }
    P2pSend e;
    e.head = std::make_unique<OpDesc>();
    e.head->rank = t.rank();
    e.head->dtype = static_cast<int32_t>(t.dtype());
    e.head->device = ranks_[index_];
    for (int i = 0; i < t.rank(); ++i) e.head->shape[i] = t.shape()[i];
    e.data = Tensor::empty(t.shape(), t.dtype());
    if (t.nbytes()) bulk_copy(e.data.raw(), t.raw(), t.nbytes());
    const int bytes = as_int(static_cast<int64_t>(t.nbytes()), "send bytes");
    check_mpi(MPI_Issend(e.head.get(), sizeof(OpDesc), MPI_BYTE, to, kP2pHeadTag, comm_, &e.req[0]),
              "MPI_Issend");
    check_mpi(MPI_Issend(e.data.raw(), bytes, MPI_BYTE, to, kP2pDataTag, comm_, &e.req[1]),
              "MPI_Issend");
    q.push_back(std::move(e));
  }

  Tensor recv(int from) override {
    check_usable();
    MESHNN_CHECK(from >= 0 && from < size_ && from != index_, "recv: peer ", from,
                 " is not another member of this group of ", size_, " (this device is member ",
                 index_, ")");
    for (auto& [peer, q] : outbox_) reap(q);  // a receiving stage also progresses its sends
    auto head = std::make_shared<OpDesc>();
    std::vector<MPI_Request> r(1);
    check_mpi(MPI_Irecv(head.get(), sizeof(OpDesc), MPI_BYTE, from, kP2pHeadTag, comm_, &r[0]),
              "MPI_Irecv");
    std::vector<int> silent;
    if (!wait_requests(r, {from}, {true}, timeout_, silent)) {
      orphans_.push_back(head);
      fail(silent, "recv (no message arrived)");
    }
    // The descriptor crossed a process boundary: check it before allocating.
    const OpDesc& h = *head;
    bool ok = h.rank >= 0 && h.rank <= kMaxRank && h.dtype >= 0 &&
              h.dtype <= static_cast<int32_t>(DType::boolean);
    Shape shape;
    for (int i = 0; ok && i < h.rank; ++i) {
      ok = h.shape[i] >= 0;
      shape.push_back(h.shape[i]);
    }
    if (!ok)
      throw CommError(
          detail::concat("recv: malformed message header from mesh rank ", ranks_[from]));
    auto data = std::make_shared<Tensor>(Tensor::empty(shape, static_cast<DType>(h.dtype)));
    check_mpi(MPI_Irecv(data->raw(), as_int(static_cast<int64_t>(data->nbytes()), "recv bytes"),
                        MPI_BYTE, from, kP2pDataTag, comm_, &r[0]),
              "MPI_Irecv");
    if (!wait_requests(r, {from}, {true}, timeout_, silent)) {
      orphans_.push_back(data);
      fail(silent, "recv (the payload did not arrive)");
    }
    return *data;
  }

  void halo(void* buf, const Region& send_prev, const Region& send_next, const Region& recv_prev,
            const Region& recv_next) override {
    std::vector<MPI_Request> req(4, MPI_REQUEST_NULL);
    std::vector<int> peer_of(4, -1);
    std::vector<bool> recv_of(4, false);
    int nreq = 0;
    auto* base = static_cast<uint8_t*>(buf);
    std::vector<std::unique_ptr<RegionType>> types;
    auto post = [&](const Region& r, int peer, int tag, bool send) {
      if (r.empty()) return;
      types.push_back(std::make_unique<RegionType>(r));
      peer_of[nreq] = peer;
      recv_of[nreq] = !send;
      if (send)
        check_mpi(MPI_Isend(base + r.offset, 1, types.back()->type, peer, tag, comm_, &req[nreq++]),
                  "MPI_Isend");
      else
        check_mpi(MPI_Irecv(base + r.offset, 1, types.back()->type, peer, tag, comm_, &req[nreq++]),
                  "MPI_Irecv");
    };
    // Tag 1 travels forward (k → k+1), tag 2 backward.
    if (index_ > 0) {
      post(recv_prev, index_ - 1, 1, false);
      post(send_prev, index_ - 1, 2, true);
    }
    if (index_ < size_ - 1) {
      post(recv_next, index_ + 1, 2, false);
      post(send_next, index_ + 1, 1, true);
    }
    req.resize(nreq);
    peer_of.resize(nreq);
    recv_of.resize(nreq);
    std::vector<int> silent;
    if (nreq > 0 && !wait_requests(req, peer_of, recv_of, timeout_, silent))
      fail(silent, "halo exchange");
  }

 private:
  // Polls `reqs` until all complete (true) or `timeout` seconds pass (0 = forever; false). On a
  // timeout `silent` gets the group indices (peer_of, −1 = unknown) of the requests still pending.
  // Pending point-to-point requests are released (receives cancelled first); a pending collective
  // request cannot be cancelled or freed (MPI forbids it) and is kept, never waited on again.
  bool wait_requests(std::vector<MPI_Request>& reqs, const std::vector<int>& peer_of,
                     const std::vector<bool>& is_recv, double timeout, std::vector<int>& silent,
                     bool collective = false) {
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
      if (timeout > 0 && std::chrono::duration<double>(clock::now() - start).count() > timeout)
        break;
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
  std::vector<OpDesc> p2p_gather(const OpDesc& mine, int tag, double timeout, const char* what) {
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
  void wait_collective(MPI_Request& r, const char* what) {
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

  [[noreturn]] void fail(const std::vector<int>& silent, const char* what) {
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

  void check_usable() const {
    if (broken_)
      throw CommError("MPI communicator unusable after a liveness timeout (the job must end)");
  }

  // One queued point-to-point send: descriptor + payload copy and their two Issend requests.
  struct P2pSend {
    std::unique_ptr<OpDesc> head;
    Tensor data;
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  };
  // Drops the completed sends at the front of q (messages are received in order).
  void reap(std::deque<P2pSend>& q) {
    while (!q.empty()) {
      int done = 0;
      check_mpi(MPI_Testall(2, q.front().req, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (!done) return;
      q.pop_front();
    }
  }

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

}  // namespace

int mpi_world_rank() {
  ensure_init();
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int mpi_world_size() {
  ensure_init();
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

bool mpi_all_true(bool ok) {
  int in = ok ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return out != 0;
}

void mpi_finalize() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  // MPI_Finalize waits for every rank: a rank that stopped (SIGSTOP, hung) after the last
  // message would keep the others there forever. Meet in a barrier polled against the liveness
  // bound first; a rank that does not come ends the job (MPI_Abort).
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double timeout = 0;
  try {
    timeout = comm_timeout_seconds();
  } catch (const Error&) {
    timeout = kDefaultCommTimeoutSeconds;
  }
  if (size > 1 && timeout > 0) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    const auto start = std::chrono::steady_clock::now();
    for (int done = 0;;) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) break;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
          timeout) {
        std::fprintf(stderr,
                     "[rank %d of %d] meshnn: liveness timeout: not every rank reached the end "
                     "of the job within %g s (the bound is --comm-timeout or "
                     "MESHNN_COMM_TIMEOUT); aborting the job\n",
                     rank, size, timeout);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  MPI_Finalize();
}

namespace {

// Polls one request until it completes (true) or `timeout` seconds pass (0 = forever; false; the
// request, a collective, stays pending: MPI can neither cancel nor free it). Spins briefly, then
// sleeps up to 1 ms between polls so that an idle rank does not hold a core.
bool wait_polled(MPI_Request& req, double timeout) {
  const auto start = std::chrono::steady_clock::now();
  for (long polls = 0;; ++polls) {
    int done = 0;
    check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return true;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout > 0 && waited > timeout) return false;
    if (polls > 2000)
      std::this_thread::sleep_for(std::chrono::microseconds(waited > 0.01 ? 1000 : 50));
  }
}

}  // namespace

std::string mpi_broadcast_bytes(const std::string& bytes, double timeout, double first_wait) {
  ensure_init();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1) return bytes;
  auto fail = [&](const char* step, double bound) {
    throw CommError(detail::concat("[rank ", rank, " of ", size, "] broadcast from rank 0 (", step,
                                   "): no progress for ", bound, " s: ",
                                   rank == 0 ? "a rank did not take part (it died, hung or stopped)"
                                             : "rank 0 did not take part",
                                   " (liveness bound: --comm-timeout or MESHNN_COMM_TIMEOUT)"));
  };
  int64_t n = rank == 0 ? static_cast<int64_t>(bytes.size()) : 0;
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &req), "MPI_Ibcast");
  const double first = rank == 0 ? timeout : first_wait;
  if (!wait_polled(req, first)) fail("length", first);
  std::string out = rank == 0 ? bytes : std::string(static_cast<size_t>(n), '\0');
  if (n > 0) {
    check_mpi(
        MPI_Ibcast(out.data(), as_int(n, "broadcast bytes"), MPI_BYTE, 0, MPI_COMM_WORLD, &req),
        "MPI_Ibcast");
    if (!wait_polled(req, timeout)) fail("bytes", timeout);
  }
  // Rank 0 returns only once every rank has the bytes (an eager send completes without them).
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &req), "MPI_Ibarrier");
  if (!wait_polled(req, timeout)) fail("acknowledgement", timeout);
  return out;
}

void mpi_abort_if_running(int code, const std::string& message) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size <= 1) return;
  std::fprintf(stderr, "[rank %d of %d] %s\n", rank, size, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

MpiMesh make_mpi_mesh(const Mesh& mesh, double timeout) {
  ensure_init();
  const int world = mpi_world_size();
  MESHNN_CHECK(world == mesh.size(), "mpi backend: mesh ", mesh.rows(), "x", mesh.cols(), " needs ",
               mesh.size(), " processes but MPI_COMM_WORLD has ", world,
               " (launch with mpiexec.openmpi -np ", mesh.size(), ")");
  // MPI_Cart_create blocks without a bound: a rank that stopped, or whose host lost its link,
  // before this call would hold every other rank there forever. Meet in a barrier polled against
  // the liveness bound first (one round trip per call).
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &req), "MPI_Ibarrier");
  if (!wait_polled(req, timeout))
    throw CommError(detail::concat(
        "[rank ", mpi_world_rank(), " of ", world, "] mpi backend: not every rank reached the ",
        mesh.rows(), "x", mesh.cols(), " mesh within ", timeout,
        " s (a rank died, hung, stopped or lost its link; liveness bound: --comm-timeout or "
        "MESHNN_COMM_TIMEOUT)"));
  MpiMesh out;
  MPI_Comm cart;
  int dims[2] = {mesh.rows(), mesh.cols()};
  int periods[2] = {0, 0};
  // reorder = 0: mesh rank = world rank, row-major like Mesh::rank_of.
  check_mpi(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart), "MPI_Cart_create");
  MPI_Comm_rank(cart, &out.rank);
  MPI_Comm shm;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
  MPI_Comm_size(shm, &out.local_ranks);
  MPI_Comm_free(&shm);
  out.comms.resize(3);
  for (int axis = 0; axis < 2; ++axis) {
    MPI_Comm sub;
    int keep[2] = {axis == 0 ? 1 : 0, axis == 1 ? 1 : 0};
    check_mpi(MPI_Cart_sub(cart, keep, &sub), "MPI_Cart_sub");
    if (mesh.axis_size(axis) > 1)
      out.comms[axis] = std::make_shared<MpiCommunicator>(sub, mesh.group(out.rank, axis), timeout);
    else
      MPI_Comm_free(&sub);
  }
  if (mesh.size() > 1) {
    std::vector<int> all(mesh.size());
    for (int i = 0; i < mesh.size(); ++i) all[i] = i;
    out.comms[2] = std::make_shared<MpiCommunicator>(cart, std::move(all), timeout);
  } else {
    MPI_Comm_free(&cart);
  }
  return out;
}

}  // namespace meshnn::mesh_detail
