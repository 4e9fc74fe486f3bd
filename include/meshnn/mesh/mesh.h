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
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace meshnn {

class CclManager;
namespace mesh_detail {
class Communicator;
}

enum class Backend { local, mpi };
const char* backend_name(Backend b);
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

  // Classifier-free-guidance style split: the mesh cut into `parts` equal submeshes along `axis`
  // (submesh shape[axis] /= parts). Submesh k holds the devices with coord[axis] / (extent/parts)
  // == k; `ranks` lists them row-major in the submesh's own coordinates.
  struct Submesh {
    int rows = 0;
    int cols = 0;
    std::vector<int> ranks;  // global rank of submesh rank i
  };
  std::vector<Submesh> split(int axis, int parts = 2) const;
  // Index of the submesh containing `rank` after split(axis, parts).
  int submesh_of(int rank, int axis, int parts = 2) const;

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

  // This device's view of its CFG submesh (the mesh split into `parts` along `axis`, see
  // Mesh::split): its own coordinates, groups and CclManager. Collective on first use for a given
  // (axis, parts): every device must call it in the same order. Cached afterwards.
  Device& submesh(int axis, int parts = 2);
  // Index of this device's submesh.
  int submesh_index(int axis, int parts = 2) const { return mesh_.submesh_of(rank_, axis, parts); }

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
  std::map<std::pair<int, int>, std::unique_ptr<Device>> submeshes_;
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

// Time-shard helpers: T split into n contiguous shards.
// Even split required: returns T / n, ShapeError when n does not divide T.
int64_t shard_len(int64_t T, int n);
// Shard i of an even split: [i·T/n, (i+1)·T/n).
struct Range {
  int64_t start = 0;
  int64_t len = 0;
};
Range shard_range(int64_t T, int n, int i);
// T rounded up to a multiple of n (the tail is padded and masked with logical_h).
int64_t round_up_to(int64_t T, int n);

}  // namespace meshnn
