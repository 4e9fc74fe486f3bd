// Mesh coordinates, groups, submesh split, SPMD launcher and shard helpers.
#include "meshnn/mesh/mesh.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <mutex>
#include <set>

#include "meshnn/core/error.h"

namespace meshnn {
namespace {

TEST(Mesh, CoordinatesAndGroups) {
  const Mesh m(2, 4);
  EXPECT_EQ(m.size(), 8);
  EXPECT_EQ(m.rank_of(1, 2), 6);
  EXPECT_EQ(m.coord(6, 0), 1);
  EXPECT_EQ(m.coord(6, 1), 2);
  // Axis 0 group = a mesh column, axis 1 group = a mesh row, both in coordinate order.
  EXPECT_EQ(m.group(6, 0), (std::vector<int>{2, 6}));
  EXPECT_EQ(m.group(6, 1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(m.axis_size(0), 2);
  EXPECT_EQ(m.axis_size(1), 4);
  EXPECT_THROW(m.axis_size(2), InvalidArgument);
  EXPECT_THROW(Mesh(0, 2), InvalidArgument);
}

TEST(Mesh, ParseMeshAndBackend) {
  const MeshConfig c = parse_mesh("2x4");
  EXPECT_EQ(c.rows, 2);
  EXPECT_EQ(c.cols, 4);
  EXPECT_THROW(parse_mesh("2by4"), InvalidArgument);
  EXPECT_THROW(parse_mesh("0x1"), InvalidArgument);
  EXPECT_THROW(parse_mesh("1x2x"), InvalidArgument);
  EXPECT_EQ(parse_backend("mpi"), Backend::mpi);
  EXPECT_THROW(parse_backend("nccl"), InvalidArgument);
}

TEST(Mesh, RunSpmdRunsEveryDeviceWithItsBudget) {
  for (auto [rows, cols] : {std::pair{1, 1}, {1, 2}, {2, 2}, {2, 4}}) {
    std::mutex mu;
    std::set<int> ranks;
    MeshConfig cfg;
    cfg.rows = rows;
    cfg.cols = cols;
    cfg.threads_per_device = 3;
    run_spmd(cfg, [&](Device& d) {
      EXPECT_EQ(d.threads(), 3);
      EXPECT_EQ(omp_get_max_threads(), 3);
      EXPECT_EQ(d.rank(), d.mesh().rank_of(d.coord(0), d.coord(1)));
      std::lock_guard<std::mutex> lk(mu);
      ranks.insert(d.rank());
    });
    EXPECT_EQ(static_cast<int>(ranks.size()), rows * cols);
  }
}

TEST(Mesh, RunSpmdRethrowsTheDeviceError) {
  MeshConfig cfg;
  cfg.rows = 1;
  cfg.cols = 1;
  EXPECT_THROW(run_spmd(cfg, [](Device&) { throw ShapeError("x"); }), ShapeError);
  cfg.cols = 2;
  EXPECT_THROW(run_spmd(cfg,
                        [](Device& d) {
                          if (d.rank() == 1) throw ShapeError("x");
                        }),
               ShapeError);
}

}  // namespace
}  // namespace meshnn
