// The world of a multi-process launch, apart from any mesh (its size is process_count in
// meshnn/mesh/mesh.h): a byte broadcast from rank 0 (e.g. a server on rank 0 handing each request
// to the other ranks, `meshnn serve
// --backend mpi`).
#pragma once

#include <string>

#include "meshnn/mesh/mesh.h"

namespace meshnn {

// Rank 0's bytes to every rank of the world (MPI backend; local: returns `bytes`). A collective:
// every rank calls it, in the same order; the others' `bytes` are ignored. It returns on rank 0
// only once every rank has the bytes, so a rank that died, hung or stopped is seen here: CommError
// when a rank does not take part for the liveness bound (comm_timeout_seconds). `wait_seconds`
// bounds how long a rank other than 0 waits for rank 0 to begin (0 = forever, for a process that
// waits for its next piece of work; < 0 = the liveness bound). Waiting ranks sleep between polls
// (an idle rank does not hold a core). The bytes go over MPI_COMM_WORLD, apart from any mesh.
std::string broadcast_from_rank0(Backend backend, const std::string& bytes,
                                 double wait_seconds = -1);

}  // namespace meshnn
