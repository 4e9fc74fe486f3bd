// Device mesh and SPMD execution.
//
// A Mesh is rows × cols devices. Axis 0 varies the row coordinate (an axis-0 group is one mesh
// column, `rows` members); axis 1 varies the column (an axis-1 group is one mesh row). Group
// members are ordered by their coordinate on the axis, which is the order collectives use.
//
// Model code is one function per device, run by run_spmd() on every device of the mesh (like MPI
// ranks). Backends:
//   local: one std::thread per device in this process, collectives through shared memory;
//   mpi:   this process is the device of its MPI rank (launch with mpiexec.openmpi -np rows·cols).
// On a 1×1 mesh no communicator is created and every collective is a local no-op.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace meshnn {

class CclManager;
namespace mesh_detail {
class Communicator;
}

enum class Backend { local, mpi };
// "local" | "mpi"; InvalidArgument otherwise.
Backend parse_backend(const std::string& s);

struct MeshConfig {
  int rows = 1;
  int cols = 1;
  Backend backend = Backend::local;
  // OpenMP threads per device; 0 = available_cores() / devices-on-this-host, at least 1.
  int threads_per_device = 0;
  // Liveness bound of every collective, both backends: a collective that makes no progress for
  // this long (a peer stopped, hung or died silently) raises CommError on every live device,
  // naming the silent one(s). 0 = wait forever; < 0 = the process default (comm_timeout_seconds).
  double timeout_seconds = -1;
};

// The default liveness bound: set_default_comm_timeout's value if set, else the environment
// variable MESHNN_COMM_TIMEOUT (seconds, ≥ 0; InvalidArgument when not a number), else 120 s.
constexpr double kDefaultCommTimeoutSeconds = 120.0;
double comm_timeout_seconds();
// Overrides the process default (e.g. from a --comm-timeout command-line option); < 0 unsets.
void set_default_comm_timeout(double seconds);
// `configured` if ≥ 0, else comm_timeout_seconds().
double resolve_comm_timeout(double configured);

// Parses "RxC" (e.g. "1x2"); InvalidArgument on anything else.
MeshConfig parse_mesh(const std::string& s);

// Pure coordinate bookkeeping (no communication).
class Mesh {
 public:
  Mesh(int rows, int cols);
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int size() const { return rows_ * cols_; }
  // Extent of an axis (0 → rows, 1 → cols); InvalidArgument for any other axis.
  int axis_size(int axis) const;
  // Row-major rank of coordinate (r, c) and back.
  int rank_of(int r, int c) const;
  int coord(int rank, int axis) const;
  // Ranks of the axis group containing `rank`, in coordinate order.
  std::vector<int> group(int rank, int axis) const;

 private:
  int rows_;
  int cols_;
};

// One device of a running mesh: its coordinates, thread budget and collective manager.
class Device {
 public:
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int rank() const { return rank_; }
  const Mesh& mesh() const { return mesh_; }
  int coord(int axis) const { return mesh_.coord(rank_, axis); }
  int axis_size(int axis) const { return mesh_.axis_size(axis); }
  int threads() const { return threads_; }
  Backend backend() const { return backend_; }
  CclManager& ccl() { return *ccl_; }

  // Internal: built by run_spmd. comms[0], comms[1] = axis groups, comms[2] = whole mesh; null
  // where the group has one member.
  Device(Mesh mesh, int rank, int threads, Backend backend,
         std::vector<std::shared_ptr<mesh_detail::Communicator>> comms);

 private:
  Mesh mesh_;
  int rank_;
  int threads_;
  Backend backend_;
  std::vector<std::shared_ptr<mesh_detail::Communicator>> comms_;
  std::unique_ptr<CclManager> ccl_;
};

// Runs `fn` once per device. Local: one thread per device; when every device has finished, the
// first error (in time) is rethrown on the caller. MPI: `fn` runs for this process's rank
// (MPI_Init if needed; the world size must equal rows·cols, else InvalidArgument); errors are
// rethrown on the rank that raised them.
void run_spmd(const MeshConfig& config, const std::function<void(Device&)>& fn);

// This process's rank in the world of `backend`: the MPI world rank (initialising MPI if needed)
// for Backend::mpi, 0 for local. A program writes its outputs from rank 0 only.
int process_rank(Backend backend);
// The number of processes in that world: the MPI world size (initialising MPI if needed) for
// Backend::mpi, 1 for local. An MPI run of an R×C mesh needs exactly R·C of them.
int process_count(Backend backend);
// MPI backend: call once at the end of a program that ran on it (finalizes MPI; no-op otherwise).
void finalize_backends();
// Under a multi-process MPI launch, prints `message` with this rank and ends the whole job with
// `code` (does not return); a no-op otherwise. For a program's top-level error handler: a rank
// that fails alone would leave the others waiting in a collective.
void abort_job_if_distributed(int code, const std::string& message);

}  // namespace meshnn
