// MPI backend tests, one process per device (run by CTest under mpiexec.openmpi -np 2 and -np 4).
// Every op runs on the MPI backend and, inside the same rank, on the local backend (run_spmd with
// threads in-process); this rank's results must agree bit for bit.
//
// main: MPI is initialised before RUN_ALL_TESTS; only rank 0 prints; the exit code is the
// logical AND of every rank's result so all ranks agree on pass / fail.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>

#include "mesh/mpi_comm.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::bit_equal;

int world_rank() { return mesh_detail::mpi_world_rank(); }
int world_size() { return mesh_detail::mpi_world_size(); }

struct MeshShape {
  int rows, cols;
};

std::vector<MeshShape> meshes() {
  switch (world_size()) {
    case 1:
      return {{1, 1}};
    case 2:
      return {{1, 2}, {2, 1}};
    case 4:
      return {{2, 2}, {1, 4}, {4, 1}};
    default:
      return {{1, world_size()}};
  }
}

std::string name(const MeshShape& m) {
  return std::to_string(m.rows) + "x" + std::to_string(m.cols);
}

MeshConfig cfg(const MeshShape& m, Backend b) {
  MeshConfig c;
  c.rows = m.rows;
  c.cols = m.cols;
  c.backend = b;
  c.threads_per_device = 1;
  c.timeout_seconds = 120;
  return c;
}

struct Both {
  Tensor mpi, local;
};

// f on this rank's MPI device, and on the same-rank device of an in-process local mesh.
Both run_both(const MeshShape& m, const std::function<Tensor(Device&)>& f) {
  Both out;
  run_spmd(cfg(m, Backend::mpi), [&](Device& d) {
    EXPECT_EQ(d.rank(), world_rank());  // reorder = 0: mesh rank = world rank
    out.mpi = f(d).clone();
  });
  std::vector<Tensor> all(m.rows * m.cols);
  run_spmd(cfg(m, Backend::local), [&](Device& d) { all[d.rank()] = f(d).clone(); });
  out.local = all[world_rank()];
  return out;
}

Tensor rnd(const Shape& s, uint64_t seed, DType dt) {
  Tensor t = test::random_uniform(s, seed);
  return dt == DType::f32 ? t : t.to(dt);
}

TEST(MpiCcl, AllGather) {
  for (const MeshShape& m : meshes())
    for (DType dt : {DType::f32, DType::bf16})
      for (int axis : {0, 1})
        for (int dim : {0, 1, -1}) {
          Both r = run_both(m, [&](Device& d) {
            return d.ccl().all_gather(rnd({2, 3, 4}, 10 + d.rank(), dt), dim, axis);
          });
          EXPECT_TRUE(bit_equal(r.mpi, r.local, name(m) + " all_gather"));
        }
}

TEST(MpiCcl, ReduceScatter) {
  for (const MeshShape& m : meshes())
    for (DType dt : {DType::f32, DType::bf16})
      for (int axis : {0, 1})
        for (int dim : {0, 1, 2}) {
          for (bool persistent : {false, true}) {
            Both r = run_both(m, [&](Device& d) {
              Tensor x = rnd({4, 8, 4}, 20 + d.rank(), dt);
              Tensor y;
              for (int rep = 0; rep < (persistent ? 3 : 1); ++rep)
                y = d.ccl().reduce_scatter(x, dim, axis, persistent);
              return y;
            });
            EXPECT_TRUE(bit_equal(r.mpi, r.local, name(m) + " reduce_scatter"));
          }
        }
}

TEST(MpiCcl, NeighborPad) {
  for (const MeshShape& m : meshes())
    for (PadMode mode : {PadMode::zeros, PadMode::replicate})
      for (DType dt : {DType::f32, DType::bf16})
        for (int axis : {0, 1}) {
          Both r = run_both(m, [&](Device& d) {
            return d.ccl().neighbor_pad(rnd({2, 5, 3}, 30 + d.rank(), dt), 1, 2, 3, mode, axis);
          });
          EXPECT_TRUE(bit_equal(r.mpi, r.local, name(m) + " np"));
          Both r2 = run_both(m, [&](Device& d) {  // an inner dim, persistent buffers
            const Tensor x = rnd({1, 3, 4, 2}, 40 + d.rank(), dt);
            Tensor y;
            for (int rep = 0; rep < 3; ++rep)
              y = d.ccl().neighbor_pad(x, 2, 1, 2, mode, axis, /*persistent=*/true);
            return y;
          });
          EXPECT_TRUE(bit_equal(r2.mpi, r2.local, name(m) + " np inner dim persistent"));
        }
}

// Each device's block of a global tensor, barriers on every group, then all-gathers along both
// axes rebuild the global tensor on every device.
TEST(MpiCcl, BarriersThenGatherOverBothAxes) {
  const Tensor full = rnd({4, 8, 3}, 70, DType::f32);
  for (const MeshShape& m : meshes()) {
    Both r = run_both(m, [&](Device& d) {
      const int64_t h = 4 / d.axis_size(0), w = 8 / d.axis_size(1);
      Tensor x = full.narrow(0, d.coord(0) * h, h).narrow(1, d.coord(1) * w, w);
      d.ccl().barrier();
      d.ccl().barrier(0);
      d.ccl().barrier(1);
      return d.ccl().all_gather(d.ccl().all_gather(x, 0, 0), 1, 1);
    });
    EXPECT_TRUE(bit_equal(r.mpi, full, name(m) + " gather mpi"));
    EXPECT_TRUE(bit_equal(r.local, full, name(m) + " gather local"));
  }
}

TEST(MpiCcl, ValidationErrorsOnEveryRank) {
  for (const MeshShape& m : meshes()) {
    const int axis = m.cols > 1 ? 1 : 0;
    EXPECT_THROW(run_spmd(cfg(m, Backend::mpi),
                          [&](Device& d) {
                            d.ccl().reduce_scatter(Tensor({6, 3}), 1, axis);
                          }),
                 ShapeError);
    EXPECT_THROW(run_spmd(cfg(m, Backend::mpi),
                          [&](Device& d) {
                            d.ccl().all_gather(Tensor({d.coord(axis) == 1 ? 3 : 2, 2}), 0, axis);
                          }),
                 ShapeError);
    EXPECT_THROW(run_spmd(cfg(m, Backend::mpi),
                          [&](Device& d) {
                            d.ccl().neighbor_pad(Tensor({1, 2, 2}), 1, 3, 0, PadMode::zeros, axis);
                          }),
                 ShapeError);
    EXPECT_THROW(run_spmd(cfg(m, Backend::mpi),
                          [&](Device& d) {
                            d.ccl().all_gather(
                                Tensor({2, 2}, d.coord(axis) == 0 ? DType::bf16 : DType::f32), 0,
                                axis);
                          }),
                 InvalidArgument);
    // The mesh still works afterwards (nobody was left inside a collective).
    Both r = run_both(m, [&](Device& d) {
      return d.ccl().all_gather(rnd({2, 2}, d.rank(), DType::f32), 0, axis);
    });
    EXPECT_TRUE(bit_equal(r.mpi, r.local));
  }
}

TEST(MpiCcl, WrongWorldSizeIsInvalidArgument) {
  MeshConfig c = cfg({1, world_size() + 1}, Backend::mpi);
  EXPECT_THROW(run_spmd(c, [](Device&) {}), InvalidArgument);
}

// Other ranks print only their failures, prefixed with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace meshnn

namespace meshnn::test {

bool mpi_all_true(bool ok) {
  int in = ok ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return out != 0;
}

}  // namespace meshnn::test

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new meshnn::FailurePrinter(rank));
  }
  const int local = RUN_ALL_TESTS();
  int ok = local == 0 ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0 && !all_ok) std::fprintf(stderr, "meshnn_mpi_tests: a rank failed\n");
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
