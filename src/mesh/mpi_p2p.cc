// MpiCommunicator's point to point: queued synchronous sends, checked receives, halo exchange.
#include <memory>

#include "mesh/mpi_communicator.h"
#include "meshnn/core/error.h"

namespace meshnn::mesh_detail {

namespace {

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

}  // namespace

// Synchronous-mode sends (MPI_Issend): a send request completes only once the receiver has
// matched it, so "not completed" means "not yet received" and the queue bound is exact. The
// payload is copied first (buffered semantics: the caller may reuse its tensor at once).
void MpiCommunicator::send(const Tensor& t, int to) {
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

Tensor MpiCommunicator::recv(int from) {
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
    throw CommError(detail::concat("recv: malformed message header from mesh rank ", ranks_[from]));
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

void MpiCommunicator::halo(void* buf, const Region& send_prev, const Region& send_next,
                           const Region& recv_prev, const Region& recv_next) {
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

// Drops the completed sends at the front of q (messages are received in order).
void MpiCommunicator::reap(std::deque<P2pSend>& q) {
  while (!q.empty()) {
    int done = 0;
    check_mpi(MPI_Testall(2, q.front().req, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (!done) return;
    q.pop_front();
  }
}

}  // namespace meshnn::mesh_detail
