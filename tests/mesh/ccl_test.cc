// CclManager on the local backend against brute-force single-process references: the global
// tensor is built on the test thread, each device's expected output is cut from it directly.
#include "meshnn/mesh/ccl.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "meshnn/mesh/mesh.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::bit_equal;
using test::random_uniform;

struct MeshShape {
  int rows, cols;
};
const MeshShape kMeshes[] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4}, {2, 4}};

std::string mesh_str(const MeshShape& m) {
  return std::to_string(m.rows) + "x" + std::to_string(m.cols);
}

MeshConfig local_cfg(const MeshShape& m, double timeout = 60.0) {
  MeshConfig c;
  c.rows = m.rows;
  c.cols = m.cols;
  c.backend = Backend::local;
  c.threads_per_device = 1;
  c.timeout_seconds = timeout;
  return c;
}

// Runs f on every device and returns each device's tensor, indexed by mesh rank.
std::vector<Tensor> on_mesh(const MeshShape& m, const std::function<Tensor(Device&)>& f) {
  std::vector<Tensor> out(m.rows * m.cols);
  run_spmd(local_cfg(m), [&](Device& d) { out[d.rank()] = f(d); });
  return out;
}

Tensor rnd(const Shape& s, uint64_t seed, DType dt) {
  Tensor t = random_uniform(s, seed);
  return dt == DType::f32 ? t : t.to(dt);
}

Tensor zero_rows(const Tensor& t, int d, int64_t len) {
  Shape s = t.shape();
  s[d] = len;
  return Tensor(s, t.dtype());
}

Tensor ref_pad(const Tensor& g, int d, int64_t pl, int64_t pr, PadMode mode) {
  std::vector<Tensor> parts;
  const int64_t L = g.shape()[d];
  if (pl > 0)
    parts.push_back(mode == PadMode::zeros ? zero_rows(g, d, pl)
                                           : concat(std::vector<Tensor>(pl, g.narrow(d, 0, 1)), d));
  parts.push_back(g);
  if (pr > 0)
    parts.push_back(mode == PadMode::zeros
                        ? zero_rows(g, d, pr)
                        : concat(std::vector<Tensor>(pr, g.narrow(d, L - 1, 1)), d));
  return concat(parts, d);
}

// Exact f32 sum in member order, then chunk `i` along d, cast back (the reduce_scatter contract).
Tensor ref_reduce_scatter(const std::vector<Tensor>& xs, int d, int n, int i) {
  Tensor acc = xs[0].to(DType::f32).clone();
  float* a = acc.data<float>();
  for (size_t k = 1; k < xs.size(); ++k) {
    Tensor x = xs[k].to(DType::f32);
    const float* p = x.data<float>();
    for (int64_t e = 0; e < acc.numel(); ++e) a[e] += p[e];
  }
  const int64_t len = acc.shape()[d] / n;
  return acc.narrow(d, i * len, len).to(xs[0].dtype());
}

class CclMeshTest : public ::testing::TestWithParam<MeshShape> {};

// ---- all_gather ---------------------------------------------------------------------------

TEST_P(CclMeshTest, AllGatherMatchesConcat) {
  const MeshShape m = GetParam();
  const Mesh mesh(m.rows, m.cols);
  const Shape shape = {2, 3, 4};
  for (DType dt : {DType::f32, DType::bf16})
    for (int axis : {0, 1})
      for (int dim : {0, 1, 2, -1}) {
        auto input = [&](int rank) { return rnd(shape, 100 + rank, dt); };
        auto got =
            on_mesh(m, [&](Device& d) { return d.ccl().all_gather(input(d.rank()), dim, axis); });
        for (int r = 0; r < mesh.size(); ++r) {
          std::vector<Tensor> parts;
          for (int g : mesh.group(r, axis)) parts.push_back(input(g));
          const int nd = dim < 0 ? dim + 3 : dim;
          EXPECT_TRUE(bit_equal(got[r], concat(parts, nd),
                                mesh_str(m) + " axis " + std::to_string(axis) + " dim " +
                                    std::to_string(dim) + " " + dtype_name(dt) + " rank " +
                                    std::to_string(r)));
        }
      }
}

// ---- reduce_scatter -----------------------------------------------------------------------

TEST_P(CclMeshTest, ReduceScatterMatchesStackSumChunk) {
  const MeshShape m = GetParam();
  const Mesh mesh(m.rows, m.cols);
  const Shape shape = {4, 8, 4};
  for (DType dt : {DType::f32, DType::bf16})
    for (int axis : {0, 1})
      for (int dim : {0, 1, 2, -2}) {
        auto input = [&](int rank) { return rnd(shape, 200 + rank, dt); };
        auto got = on_mesh(
            m, [&](Device& d) { return d.ccl().reduce_scatter(input(d.rank()), dim, axis); });
        for (int r = 0; r < mesh.size(); ++r) {
          std::vector<Tensor> xs;
          const auto grp = mesh.group(r, axis);
          for (int g : grp) xs.push_back(input(g));
          const int nd = dim < 0 ? dim + 3 : dim;
          const Tensor want =
              grp.size() == 1
                  ? input(r)
                  : ref_reduce_scatter(xs, nd, static_cast<int>(grp.size()), mesh.coord(r, axis));
          EXPECT_TRUE(bit_equal(got[r], want,
                                mesh_str(m) + " axis " + std::to_string(axis) + " dim " +
                                    std::to_string(dim) + " " + dtype_name(dt)));
        }
      }
}

// ---- neighbor_pad -------------------------------------------------------------------------

struct PadCase {
  Shape shard;
  int dim;
  int64_t pl, pr;
  int axis;
};

// Global tensor for the devices sharing the coordinate not used by the op, the device's shard of
// it, and the expected padded window.
struct PadRef {
  const Mesh& mesh;
  const PadCase& pc;
  PadMode mode;
  DType dt;

  uint64_t group_seed(int rank) const {
    const int other = 1 - pc.axis;
    return 7 * 31 + mesh.coord(rank, other) + 1;
  }
  // The padded dim counted from the front (the case may give it from the back, as the op allows).
  int dim() const { return pc.dim < 0 ? pc.dim + static_cast<int>(pc.shard.size()) : pc.dim; }
  Shape global_shape() const {
    Shape g = pc.shard;
    g[dim()] *= mesh.axis_size(pc.axis);
    return g;
  }
  Tensor global(int rank) const { return rnd(global_shape(), 1000 + group_seed(rank), dt); }
  int64_t start(int rank) const { return mesh.coord(rank, pc.axis) * pc.shard[dim()]; }
  Tensor shard(int rank) const { return global(rank).narrow(dim(), start(rank), pc.shard[dim()]); }
  Tensor expected(int rank) const {
    const Tensor g = ref_pad(global(rank), dim(), pc.pl, pc.pr, mode);
    return g.narrow(dim(), start(rank), pc.shard[dim()] + pc.pl + pc.pr);
  }
};

std::vector<PadCase> pad_cases() {
  std::vector<PadCase> v;
  for (int axis : {0, 1}) {
    v.push_back({{1, 5, 3}, 1, 2, 1, axis});
    v.push_back({{1, 5, 3}, 1, 0, 3, axis});
    v.push_back({{1, 5, 3}, 1, 5, 5, axis});     // pad = shard length
    v.push_back({{2, 4, 3, 2}, 1, 1, 2, axis});  // outer > 1
    v.push_back({{1, 3, 4, 2}, 2, 2, 1, axis});  // an inner dim
    v.push_back({{3, 4, 2}, 0, 1, 2, axis});     // the outermost dim
    v.push_back({{2, 4, 3}, -2, 2, 2, axis});    // a negative dim
  }
  return v;
}

TEST_P(CclMeshTest, NeighborPadMatchesGlobalPadAndCut) {
  const MeshShape m = GetParam();
  const Mesh mesh(m.rows, m.cols);
  int ci = 0;
  for (const PadCase& pc : pad_cases()) {
    ++ci;
    for (PadMode mode : {PadMode::zeros, PadMode::replicate})
      for (DType dt : {DType::f32, DType::bf16})
        for (bool persistent : {false, true}) {
          const PadRef ref{mesh, pc, mode, dt};
          auto got = on_mesh(m, [&](Device& d) {
            Tensor x = ref.shard(d.rank());
            Tensor y;
            for (int rep = 0; rep < (persistent ? 3 : 1); ++rep)
              y = d.ccl().neighbor_pad(x, pc.dim, pc.pl, pc.pr, mode, pc.axis, persistent);
            return y.clone();
          });
          for (int r = 0; r < mesh.size(); ++r)
            ASSERT_TRUE(bit_equal(got[r], ref.expected(r),
                                  mesh_str(m) + " case " + std::to_string(ci) + " mode " +
                                      std::to_string(static_cast<int>(mode)) + " " +
                                      dtype_name(dt) + " rank " + std::to_string(r)));
        }
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, CclMeshTest, ::testing::ValuesIn(kMeshes),
                         [](const auto& info) { return "m" + mesh_str(info.param); });

// ---- persistent ping-pong buffers ---------------------------------------------------------

TEST(CclPersistent, PingPongReuseAndReset) {
  run_spmd(local_cfg({1, 2}), [&](Device& d) {
    CclManager& ccl = d.ccl();
    Tensor x = rnd({2, 3}, 1 + d.rank(), DType::f32);
    Tensor a = ccl.all_gather(x, 0, 1, true);
    Tensor b = ccl.all_gather(x, 0, 1, true);
    Tensor c = ccl.all_gather(x, 0, 1, true);
    EXPECT_NE(a.raw(), b.raw());
    EXPECT_EQ(a.raw(), c.raw());
    // A different key (dim) gets its own pair.
    Tensor e = ccl.all_gather(x, 1, 1, true);
    EXPECT_NE(e.raw(), a.raw());
    EXPECT_NE(e.raw(), b.raw());
    Tensor r1 = ccl.reduce_scatter(x, 0, 1, true);
    Tensor r2 = ccl.reduce_scatter(x, 0, 1, true);
    Tensor r3 = ccl.reduce_scatter(x, 0, 1, true);
    EXPECT_NE(r1.raw(), r2.raw());
    EXPECT_EQ(r1.raw(), r3.raw());
    Tensor n1 = ccl.neighbor_pad(x, 1, 1, 1, PadMode::zeros, 1, true);
    Tensor n2 = ccl.neighbor_pad(x, 1, 1, 1, PadMode::zeros, 1, true);
    Tensor n3 = ccl.neighbor_pad(x, 1, 1, 1, PadMode::zeros, 1, true);
    EXPECT_NE(n1.raw(), n2.raw());
    EXPECT_EQ(n1.raw(), n3.raw());
    // A different pad is a different key.
    Tensor n4 = ccl.neighbor_pad(x, 1, 1, 2, PadMode::zeros, 1, true);
    EXPECT_NE(n4.raw(), n1.raw());
    EXPECT_NE(n4.raw(), n2.raw());
    ccl.reset();
    Tensor f = ccl.all_gather(x, 0, 1, true);
    EXPECT_TRUE(bit_equal(f, a));
  });
}

TEST(CclPersistent, AxisOfExtentOneIsANoOp) {
  run_spmd(local_cfg({1, 2}), [&](Device& d) {
    Tensor x = rnd({2, 3}, 1, DType::f32);
    EXPECT_EQ(d.ccl().all_gather(x, 0, 0).raw(), x.raw());
    EXPECT_EQ(d.ccl().reduce_scatter(x, 0, 0).raw(), x.raw());
    d.ccl().barrier(0);
    d.ccl().barrier(1);
    d.ccl().barrier();
  });
}

// ---- failure propagation and timeout ------------------------------------------------------

struct Outcome {
  std::string type;
  std::string what;
};

template <class F>
std::vector<Outcome> outcomes(const MeshShape& m, double timeout, F body,
                              std::exception_ptr* first = nullptr) {
  std::vector<Outcome> out(m.rows * m.cols);
  try {
    run_spmd(local_cfg(m, timeout), [&](Device& d) {
      try {
        body(d);
        out[d.rank()] = {"ok", ""};
      } catch (const CommError& e) {
        // Recorded and swallowed: a device whose own function fails aborts the whole mesh, which
        // would turn other groups' errors into CommErrors; these tests look at each device's view.
        out[d.rank()] = {"CommError", e.what()};
      } catch (const ShapeError& e) {
        out[d.rank()] = {"ShapeError", e.what()};
      } catch (const InvalidArgument& e) {
        out[d.rank()] = {"InvalidArgument", e.what()};
      } catch (const std::exception& e) {
        out[d.rank()] = {"other", e.what()};
        throw;
      }
    });
  } catch (...) {
    if (first) *first = std::current_exception();
  }
  return out;
}

TEST(CclFailure, ThrowingDeviceFailsEveryOtherDevice) {
  std::exception_ptr first;
  auto res = outcomes(
      {2, 2}, 0 /* no timeout: must not hang anyway */,
      [](Device& d) {
        Tensor x({4, 2});
        d.ccl().all_gather(x, 0, 1);  // one collective succeeds
        if (d.rank() == 2) throw std::runtime_error("boom on purpose");
        d.ccl().all_gather(x, 0, 0);
        d.ccl().reduce_scatter(x, 0, 1);
      },
      &first);
  for (int r = 0; r < 4; ++r) {
    if (r == 2) {
      EXPECT_EQ(res[r].type, "other");
      continue;
    }
    EXPECT_EQ(res[r].type, "CommError") << r;
    EXPECT_NE(res[r].what.find("device 2"), std::string::npos) << res[r].what;
    EXPECT_NE(res[r].what.find("boom on purpose"), std::string::npos) << res[r].what;
  }
  ASSERT_TRUE(first);
  try {
    std::rethrow_exception(first);
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom on purpose");  // the first error, not a CommError
  }
}

TEST(CclFailure, MissingDeviceTimesOut) {
  std::exception_ptr first;
  auto res = outcomes(
      {1, 4}, 0.2,
      [](Device& d) {
        Tensor x({4, 2});
        if (d.rank() == 3) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        d.ccl().all_gather(x, 0, 1);
      },
      &first);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(res[r].type, "CommError") << r;
    if (r != 3) {
      EXPECT_NE(res[r].what.find("timeout"), std::string::npos) << res[r].what;
    }
  }
  EXPECT_THROW(std::rethrow_exception(first), CommError);
}

TEST(CclFailure, DeviceSkippingACollectiveIsDetected) {
  // Device 0 returns without the collective the others wait in: no timeout set, still no hang.
  auto res = outcomes({1, 2}, 0, [](Device& d) {
    if (d.rank() == 0) return;
    d.ccl().barrier(1);
  });
  EXPECT_EQ(res[0].type, "ok");
  EXPECT_EQ(res[1].type, "CommError");
}

// ---- validation on every device -----------------------------------------------------------

void expect_all(const std::vector<Outcome>& res, const std::string& type,
                const std::string& needle = "", bool same_message = true) {
  for (size_t r = 0; r < res.size(); ++r) {
    EXPECT_EQ(res[r].type, type) << "rank " << r << ": " << res[r].what;
    if (!needle.empty()) {
      EXPECT_NE(res[r].what.find(needle), std::string::npos) << res[r].what;
    }
  }
  // Same message everywhere (every device evaluated the same checks); groups of different axes
  // name their own first bad device.
  for (size_t r = 1; same_message && r < res.size(); ++r) EXPECT_EQ(res[r].what, res[0].what);
}

TEST(CclValidation, UnevenReduceScatter) {
  expect_all(outcomes({1, 4}, 5,
                      [](Device& d) {
                        d.ccl().reduce_scatter(Tensor({6, 2}), 0, 1);
                      }),
             "ShapeError", "does not split evenly");
}

TEST(CclValidation, DimOutOfRange) {
  expect_all(outcomes({2, 2}, 5,
                      [](Device& d) {
                        d.ccl().all_gather(Tensor({6, 2}), 2, 0);
                      }),
             "ShapeError", "out of range", false);
  expect_all(outcomes({2, 2}, 5,
                      [](Device& d) {
                        d.ccl().reduce_scatter(Tensor({6, 2}), -3, 1);
                      }),
             "ShapeError", "out of range", false);
}

TEST(CclValidation, PadLargerThanShard) {
  expect_all(outcomes({1, 2}, 5,
                      [](Device& d) {
                        d.ccl().neighbor_pad(Tensor({1, 3, 2}), 1, 4, 1, PadMode::zeros, 1);
                      }),
             "ShapeError", "exceeds the shard length");
  // On 1×1 the same check runs locally.
  expect_all(outcomes({1, 1}, 5,
                      [](Device& d) {
                        d.ccl().neighbor_pad(Tensor({1, 3, 2}), 1, 4, 1, PadMode::zeros, 1);
                      }),
             "ShapeError", "exceeds the shard length");
}

TEST(CclValidation, ShapeMismatchBetweenDevices) {
  expect_all(outcomes({1, 4}, 5,
                      [](Device& d) {
                        d.ccl().all_gather(Tensor({d.rank() == 2 ? 5 : 4, 2}), 0, 1);
                      }),
             "ShapeError", "device 2 has shape (5, 2)");
}

TEST(CclValidation, DTypeMismatchBetweenDevices) {
  expect_all(
      outcomes(
          {2, 1}, 5,
          [](Device& d) {
            d.ccl().reduce_scatter(Tensor({4, 2}, d.rank() == 1 ? DType::bf16 : DType::f32), 0, 0);
          }),
      "InvalidArgument", "dtype bf16");
}

TEST(CclValidation, PadMismatchReachesTheGroup) {
  // Only device 1 asks for another pad; every device of its row sees it.
  expect_all(
      outcomes(
          {1, 4}, 5,
          [](Device& d) {
            d.ccl().neighbor_pad(Tensor({1, 4, 2}), 1, d.rank() == 1 ? 2 : 1, 1, PadMode::zeros, 1);
          }),
      "InvalidArgument", "different op arguments");
}

TEST(CclValidation, NonexistentAxis) {
  expect_all(outcomes({1, 2}, 5,
                      [](Device& d) {
                        d.ccl().all_gather(Tensor({4, 2}), 0, 2);
                      }),
             "InvalidArgument", "mesh axis");
  expect_all(outcomes({1, 2}, 5,
                      [](Device& d) {
                        d.ccl().neighbor_pad(Tensor({1, 4, 2}), 1, 1, 1, PadMode::zeros, -1);
                      }),
             "InvalidArgument", "mesh axis");
}

}  // namespace
}  // namespace meshnn
