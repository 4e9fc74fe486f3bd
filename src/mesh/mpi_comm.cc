// The MPI backend's setup: MPI_Init, the mesh's Cartesian communicators (MpiCommunicator), split,
// the world-wide helpers (rank / size, broadcast, finalize, abort), each bounded by the liveness
// timeout.
#include "mesh/mpi_comm.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>

#include "mesh/mpi_communicator.h"
#include "meshnn/core/error.h"

namespace meshnn::mesh_detail {

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

namespace {

void ensure_init() {
  int init = 0;
  MPI_Initialized(&init);
  if (!init) {
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  }
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, std::vector<int> mesh_ranks, double timeout)
    : comm_(comm), ranks_(std::move(mesh_ranks)), timeout_(timeout) {
  MPI_Comm_size(comm_, &size_);
  MPI_Comm_rank(comm_, &index_);
}

MpiCommunicator::~MpiCommunicator() {
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
