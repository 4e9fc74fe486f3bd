// Point-to-point hand-over (CclManager::send / recv) on the MPI backend, one process per device:
// pipelines along every axis of the np-2 and np-4 meshes (bit-exact bytes, shapes and dtypes
// carried), the depth-2 bound (synchronous-mode sends), and the liveness bound on a silent sender.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "mesh/communicator.h"
#include "mesh/mpi_comm.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::bit_equal;

MeshConfig mpi_cfg(int rows, int cols, double timeout = 120) {
  MeshConfig c;
  c.rows = rows;
  c.cols = cols;
  c.backend = Backend::mpi;
  c.threads_per_device = 1;
  c.timeout_seconds = timeout;
  return c;
}

Tensor chunk(int k) {
  const Shape s = k % 3 == 0   ? Shape{1, 5 + k, 7}
                  : k % 3 == 1 ? Shape{3, 4}
                               : Shape{2, 1, 3, k + 1};
  Tensor t = test::random_uniform(s, 100 + static_cast<uint64_t>(k));
  return k % 4 == 3 ? t.to(DType::bf16) : t;
}

TEST(MpiP2p, PipelinesOnEveryAxis) {
  const int n = mesh_detail::mpi_world_size();
  if (n < 2) GTEST_SKIP() << "needs at least 2 ranks";
  struct Case {
    int rows, cols, axis;
  };
  std::vector<Case> cases = {{1, n, 1}, {n, 1, 0}, {1, n, -1}};
  if (n == 4) cases.insert(cases.end(), {{2, 2, 0}, {2, 2, 1}, {2, 2, -1}});
  for (Case c : cases) {
    int received = 0;
    run_spmd(mpi_cfg(c.rows, c.cols), [&](Device& d) {
      const int len = c.axis == -1 ? d.mesh().size() : d.axis_size(c.axis);
      const int me = c.axis == -1 ? d.rank() : d.coord(c.axis);
      for (int k = 0; k < 7; ++k) {
        const Tensor want = chunk(k);
        Tensor x = me == 0 ? want : d.ccl().recv(me - 1, c.axis);
        EXPECT_TRUE(bit_equal(x, want, "chunk " + std::to_string(k)));
        if (me > 0) ++received;
        if (me + 1 < len) d.ccl().send(x, me + 1, c.axis);
      }
    });
    const bool first =
        (c.axis == -1 ? mesh_detail::mpi_world_rank()
                      : Mesh(c.rows, c.cols).coord(mesh_detail::mpi_world_rank(), c.axis)) == 0;
    EXPECT_EQ(received, first ? 0 : 7);
  }
}

TEST(MpiP2p, SendRunsAheadByTwoAndNoMore) {
  const int n = mesh_detail::mpi_world_size();
  if (n < 2) GTEST_SKIP() << "needs at least 2 ranks";
  // Rank 0 sends 3 messages and then waits in a barrier; rank 1 enters the barrier before any
  // recv. The first two sends must return without a receiver (buffered); the barrier then
  // proceeds, and the third send (queue full) completes once rank 1 receives.
  run_spmd(mpi_cfg(1, n), [&](Device& d) {
    if (d.rank() == 0) {
      for (int k = 0; k < 2; ++k) d.ccl().send(chunk(k), 1, 1);
      d.ccl().barrier();
      d.ccl().send(chunk(2), 1, 1);
    } else if (d.rank() == 1) {
      d.ccl().barrier();
      for (int k = 0; k < 3; ++k) EXPECT_TRUE(bit_equal(d.ccl().recv(0, 1), chunk(k)));
    } else {
      d.ccl().barrier();
    }
  });
}

TEST(MpiP2p, SilentSenderHitsTheLivenessBound) {
  const int n = mesh_detail::mpi_world_size();
  if (n < 2) GTEST_SKIP() << "needs at least 2 ranks";
  std::string error;
  try {
    run_spmd(mpi_cfg(1, n, 0.5), [&](Device& d) {
      if (d.rank() == 1) d.ccl().recv(0, 1);  // rank 0 never sends
    });
  } catch (const CommError& e) {
    error = e.what();
  }
  if (mesh_detail::mpi_world_rank() == 1) {
    EXPECT_NE(error.find("silent mesh rank(s): 0"), std::string::npos) << error;
    EXPECT_NE(error.find("recv"), std::string::npos) << error;
  } else {
    EXPECT_TRUE(error.empty()) << error;
  }
  EXPECT_TRUE(test::mpi_all_true(true));
}

TEST(MpiP2p, ValidationIsLocal) {
  const int n = mesh_detail::mpi_world_size();
  if (n < 2) GTEST_SKIP() << "needs at least 2 ranks";
  run_spmd(mpi_cfg(1, n), [&](Device& d) {
    EXPECT_THROW(d.ccl().send(chunk(0), d.rank(), 1), InvalidArgument);
    EXPECT_THROW(d.ccl().send(chunk(0), 0, 0), InvalidArgument);  // axis 0 has extent 1
    EXPECT_THROW(d.ccl().recv(n, 1), InvalidArgument);
  });
}

}  // namespace
}  // namespace meshnn
