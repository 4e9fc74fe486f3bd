// `meshnn serve --backend mpi`: one server over an MPI mesh (docs/serve.md, "Across machines").
//
// Every rank of the mpiexec launch loads the models. Rank 0 runs the HTTP server; for each
// one-shot request its compute worker hands the call to rank 0's main thread (MPI is initialised
// there, MPI_THREAD_FUNNELED), which broadcasts a small command (model name, input shape and bytes)
// to the other ranks and then decodes on the whole mesh with them, SPMD; the output comes back
// whole on every rank and rank 0 replies. The other ranks only follow: they wait for the next
// command (sleeping, not spinning), run it, and stop when rank 0 says so. One request at a time
// uses the mesh; streams are refused (501).
//
// Faults: a rank that died, hung or stopped makes rank 0's broadcast or the decode's collectives
// raise CommError within the liveness bound (--comm-timeout / MESHNN_COMM_TIMEOUT): that request
// and every later one answer 503, the server drains, and rank 0 ends the whole job with exit code
// 3 (MPI_Abort) so that a supervisor restarts it. SIGTERM / SIGINT on rank 0: the usual drain, then
// rank 0 tells the other ranks to stop and every rank exits 0. The other ranks ignore SIGTERM /
// SIGINT (mpiexec forwards them to every rank): they must stay for the requests rank 0 finishes.
#pragma once

#include <memory>
#include <vector>

#include "meshnn/mesh/mesh.h"
#include "serve/http.h"
#include "serve/models.h"

namespace meshnn::serve {

// Every rank calls it with the same models, in the same order, after loading them. mesh: the
// launch's mesh (rows·cols = the world size, checked by the caller); threads: OpenMP threads per
// rank (0 = cores / ranks on the host). Returns this rank's exit code (0 after a clean stop); a
// mesh failure does not return (the job ends with code 3).
int run_mpi_server(ServeConfig config,
                   const std::vector<std::shared_ptr<const ServedModel>>& models,
                   const MeshConfig& mesh, int threads);

}  // namespace meshnn::serve
