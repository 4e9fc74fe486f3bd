// MPI backend: one process per device, MPI_Cart_create over the mesh and MPI_Cart_sub per axis.
// Only the mpi_*.cc files include mpi.h (through mpi_communicator.h): callers see the
// Communicator interface.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mesh/communicator.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::mesh_detail {

struct MpiMesh {
  int rank = 0;         // row-major mesh rank of this process
  int local_ranks = 1;  // ranks of this job on this host (for the thread budget)
  // [axis 0, axis 1, whole mesh]; null where the group has one member.
  std::vector<std::shared_ptr<Communicator>> comms;
};

// MPI_Init_thread if needed; InvalidArgument unless the world size is rows·cols.
// timeout_seconds: liveness bound of every communication call (0 = wait forever). Calls are
// non-blocking requests polled against it; on expiry the call throws CommError naming the mesh
// ranks that did not take part, and the communicator is unusable afterwards.
MpiMesh make_mpi_mesh(const Mesh& mesh, double timeout_seconds = 120.0);

// MPI world rank / size (initialising MPI if needed); used by tests and the bench CLI.
int mpi_world_rank();
int mpi_world_size();
void mpi_finalize();
// broadcast_from_rank0 (meshnn/mesh/mesh.h) over MPI_COMM_WORLD: Ibcast of the length and the
// bytes, then an Ibarrier, polled; `timeout` bounds each wait after the first, `first_wait` the
// first one on ranks other than 0 (0 = forever).
std::string mpi_broadcast_bytes(const std::string& bytes, double timeout, double first_wait);

// For a fatal error on one rank: when MPI is initialised (not yet finalised) and the world has
// more than one process, prints `message` to stderr prefixed with this rank and calls
// MPI_Abort(MPI_COMM_WORLD, code), so peers blocked in a collective end too instead of waiting
// forever. Otherwise returns without doing anything (and without initialising MPI).
void mpi_abort_if_running(int code, const std::string& message);

}  // namespace meshnn::mesh_detail
