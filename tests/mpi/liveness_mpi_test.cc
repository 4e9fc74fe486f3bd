// MPI liveness: a rank that stops taking part (here: it sleeps past the bound and never joins)
// makes every live rank raise CommError naming it, after MESHNN_COMM_TIMEOUT seconds (2 s here),
// instead of waiting forever.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "mesh/mpi_comm.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "mpi/mpi_test_util.h"

namespace meshnn {
namespace {

TEST(MpiLiveness, EveryLiveRankNamesTheSilentRank) {
  const int n = mesh_detail::mpi_world_size(), me = mesh_detail::mpi_world_rank();
  if (n < 2) GTEST_SKIP() << "needs at least 2 ranks";
  ::setenv("MESHNN_COMM_TIMEOUT", "2", 1);
  MeshConfig c;
  c.cols = n;
  c.backend = Backend::mpi;
  c.threads_per_device = 1;
  c.timeout_seconds = -1;  // the default: from MESHNN_COMM_TIMEOUT
  const int silent = n - 1;
  std::string error;
  try {
    run_spmd(c, [&](Device& d) {
      if (d.rank() == silent) {
        std::this_thread::sleep_for(std::chrono::seconds(4));  // past the 2 s bound
        return;                                                // and never joins
      }
      d.ccl().barrier();
    });
  } catch (const CommError& e) {
    error = e.what();
  }
  ::unsetenv("MESHNN_COMM_TIMEOUT");
  if (me == silent) {
    EXPECT_TRUE(error.empty()) << error;
  } else {
    EXPECT_NE(error.find("silent mesh rank(s): " + std::to_string(silent)), std::string::npos)
        << error;
    EXPECT_NE(error.find("no progress for 2 s"), std::string::npos) << error;
  }
  EXPECT_TRUE(test::mpi_all_true(true));  // everyone is here again
}

// A rank that is late for the mesh itself (stopped, or its host lost its link, before the call)
// was once waited for forever inside MPI_Cart_create; now every punctual rank raises CommError
// within the bound. The late rank meets the others' abandoned barrier afterwards.
TEST(MpiLiveness, RankLateForTheMeshEndsTheCallWithinTheBound) {
  const int n = mesh_detail::mpi_world_size(), me = mesh_detail::mpi_world_rank();
  if (n < 2) GTEST_SKIP() << "needs at least 2 ranks";
  const int late = n - 1;
  if (me == late) {
    std::this_thread::sleep_for(std::chrono::seconds(4));  // past the 2 s bound
    // The others' polled barrier (a nonblocking collective matches only a nonblocking one).
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
  } else {
    MeshConfig c;
    c.cols = n;
    c.backend = Backend::mpi;
    c.threads_per_device = 1;
    c.timeout_seconds = 2;
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      run_spmd(c, [](Device& d) { d.ccl().barrier(); });
    } catch (const CommError& e) {
      error = e.what();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_NE(error.find("not every rank reached the 1x" + std::to_string(n) + " mesh within 2 s"),
              std::string::npos)
        << error;
    EXPECT_LT(s, 3.5);
  }
  EXPECT_TRUE(test::mpi_all_true(true));  // everyone is here again
}

TEST(MpiLiveness, BadEnvironmentValueIsRefused) {
  ::setenv("MESHNN_COMM_TIMEOUT", "soon", 1);
  EXPECT_THROW(comm_timeout_seconds(), InvalidArgument);
  ::setenv("MESHNN_COMM_TIMEOUT", "7.5", 1);
  EXPECT_DOUBLE_EQ(comm_timeout_seconds(), 7.5);
  ::unsetenv("MESHNN_COMM_TIMEOUT");
  EXPECT_DOUBLE_EQ(comm_timeout_seconds(), kDefaultCommTimeoutSeconds);
}

}  // namespace
}  // namespace meshnn
