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

Tensor ref_mask(const Tensor& g, int d, int64_t lh) {
  const int64_t L = g.shape()[d];
  if (lh <= 0 || lh >= L) return g;
  return concat({g.narrow(d, 0, lh), zero_rows(g, d, L - lh)}, d);
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
  std::vector<int> dims;
  std::vector<int64_t> pl, pr;
  std::vector<int> axes;
  int64_t tfp = 0;
  int64_t lh = 0;  // as a fraction: set per mesh below when < 0
};

// Global tensor for the devices sharing the coordinates not used by the op, the device's shard
// of it, and the expected padded window.
struct PadRef {
  const Mesh& mesh;
  const PadCase& pc;
  PadMode mode;
  DType dt;
  int64_t lh;

  uint64_t group_seed(int rank) const {
    uint64_t s = 7;
    for (int a = 0; a < 2; ++a) {
      bool used = false;
      for (int x : pc.axes) used |= x == a;
      if (!used) s = s * 31 + mesh.coord(rank, a) + 1;
    }
    return s;
  }
  Shape global_shape() const {
    Shape g = pc.shard;
    for (size_t i = 0; i < pc.dims.size(); ++i) g[pc.dims[i]] *= mesh.axis_size(pc.axes[i]);
    return g;
  }
  Tensor global(int rank) const { return rnd(global_shape(), 1000 + group_seed(rank), dt); }
  Tensor shard(int rank) const {
    Tensor g = global(rank);
    for (size_t i = 0; i < pc.dims.size(); ++i) {
      const int64_t S = pc.shard[pc.dims[i]];
      g = g.narrow(pc.dims[i], mesh.coord(rank, pc.axes[i]) * S, S);
    }
    return g;
  }
  Tensor expected(int rank) const {
    Tensor g = ref_mask(global(rank), pc.dims[0], lh);
    for (size_t i = 0; i < pc.dims.size(); ++i)
      g = ref_pad(g, pc.dims[i], pc.pl[i], pc.pr[i], mode);
    for (size_t i = 0; i < pc.dims.size(); ++i) {
      const int64_t S = pc.shard[pc.dims[i]];
      g = g.narrow(pc.dims[i], mesh.coord(rank, pc.axes[i]) * S, S + pc.pl[i] + pc.pr[i]);
    }
    if (pc.tfp > 0) g = concat({zero_rows(g, pc.dims[0] - 1, pc.tfp), g}, pc.dims[0] - 1);
    return g;
  }
};

std::vector<PadCase> pad_cases() {
  std::vector<PadCase> v;
  for (int axis : {0, 1}) {
    v.push_back({{1, 5, 3}, {1}, {2}, {1}, {axis}});
    v.push_back({{1, 5, 3}, {1}, {0}, {3}, {axis}});
    v.push_back({{1, 5, 3}, {1}, {5}, {5}, {axis}});           // pad = shard length
    v.push_back({{2, 4, 3, 2}, {1}, {1}, {2}, {axis}});        // outer > 1
    v.push_back({{1, 3, 4, 2}, {2}, {2}, {1}, {axis}, 2, 0});  // t_front_pad
    v.push_back({{1, 4, 3}, {1}, {2}, {2}, {axis}, 0, -1});    // logical_h
  }
  for (auto ax : std::vector<std::vector<int>>{{0, 1}, {1, 0}}) {
    v.push_back({{1, 2, 4, 3, 2}, {2, 3}, {1, 2}, {2, 1}, ax});
    v.push_back({{1, 2, 4, 3, 2}, {2, 3}, {2, 1}, {1, 3}, ax, 3, 0});
    v.push_back({{1, 2, 4, 3, 2}, {2, 3}, {1, 1}, {1, 1}, ax, 1, -1});
    v.push_back({{3, 4, 2}, {0, 1}, {1, 1}, {2, 2}, ax});  // pads on the outermost dims
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
          int64_t lh = pc.lh;
          if (lh < 0) {  // mask the last 3 global rows (some devices fully, one partially)
            const int64_t G = pc.shard[pc.dims[0]] * mesh.axis_size(pc.axes[0]);
            lh = std::max<int64_t>(1, G - 3);
          }
          const PadRef ref{mesh, pc, mode, dt, lh};
          auto got = on_mesh(m, [&](Device& d) {
            Tensor x = ref.shard(d.rank());
            Tensor y;
            for (int rep = 0; rep < (persistent ? 3 : 1); ++rep)
              y = d.ccl().neighbor_pad(x, pc.dims, pc.pl, pc.pr, mode, pc.axes, pc.tfp, lh,
                                       persistent);
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

// Halo-only compact buffer + halo_scatter rebuilds neighbor_pad exactly, both scatter forms.
TEST_P(CclMeshTest, HaloOnlyPlusScatterEqualsNeighborPad) {
  const MeshShape m = GetParam();
  const Mesh mesh(m.rows, m.cols);
  struct HCase {
    Shape shard;
    std::vector<int> dims;
    std::vector<int64_t> pads;
    std::vector<int> axes;
  };
  const std::vector<HCase> cases = {
      {{1, 2, 4, 3, 2}, {2, 3}, {1, 2}, {0, 1}},
      {{2, 4, 3, 5}, {1, 2}, {2, 1}, {1, 0}},
      {{1, 6, 4}, {1}, {2}, {1}},
      {{2, 3, 2, 4}, {1}, {1}, {0}},  // 1-D, W = two dims
  };
  for (const HCase& hc : cases)
    for (PadMode mode : {PadMode::zeros, PadMode::replicate}) {
      PadCase pc{hc.shard, hc.dims, hc.pads, hc.pads, hc.axes};
      const PadRef ref{mesh, pc, mode, DType::f32, 0};
      const int h = hc.dims[0];
      const int64_t pH = hc.pads[0], pW = hc.dims.size() == 2 ? hc.pads[1] : 0;
      std::vector<Tensor> fused(mesh.size()), border(mesh.size());
      run_spmd(local_cfg(m), [&](Device& d) {
        Tensor x = ref.shard(d.rank());
        Tensor compact = d.ccl().neighbor_pad_halo_only(x, hc.dims, hc.pads, mode, hc.axes);
        Shape ps = x.shape();
        ps[h] += 2 * pH;
        if (pW) ps[h + 1] += 2 * pW;
        Tensor f(ps, DType::f32);
        CclManager::halo_scatter(compact, f, h, pH, pW, &x);
        fused[d.rank()] = f;
        // Border-only: the interior is already in place (a previous layer wrote it).
        Tensor b =
            d.ccl().neighbor_pad(x, hc.dims, hc.pads, hc.pads, PadMode::zeros, hc.axes).clone();
        CclManager::halo_scatter(compact, b, h, pH, pW);
        border[d.rank()] = b;
      });
      for (int r = 0; r < mesh.size(); ++r) {
        EXPECT_TRUE(bit_equal(fused[r], ref.expected(r), mesh_str(m) + " fused"));
        EXPECT_TRUE(bit_equal(border[r], ref.expected(r), mesh_str(m) + " border"));
      }
    }
}

// ---- partition / gather_to_host -----------------------------------------------------------

TEST_P(CclMeshTest, PartitionIsInverseOfAllGather) {
  const MeshShape m = GetParam();
  const Shape shape = {2, 8, 4};
  const Tensor full = rnd(shape, 5, DType::f32);
  for (int axis : {0, 1})
    for (bool persistent : {false, true}) {
      auto got = on_mesh(m, [&](Device& d) {
        Tensor p = d.ccl().partition(full, 1, axis, persistent);
        EXPECT_EQ(p.shape()[1], 8 / d.axis_size(axis));
        return d.ccl().all_gather(p, 1, axis).clone();
      });
      for (const Tensor& g : got) EXPECT_TRUE(bit_equal(g, full, "partition∘all_gather"));
    }
}

TEST_P(CclMeshTest, GatherToHostRebuildsTwoAxisShards) {
  const MeshShape m = GetParam();
  const Mesh mesh(m.rows, m.cols);
  const Shape shape = {4, 8, 3};
  const Tensor full = rnd(shape, 9, DType::f32);
  auto got = on_mesh(m, [&](Device& d) {
    Tensor x = d.ccl().partition(d.ccl().partition(full, 0, 0), 1, 1);
    return d.ccl().gather_to_host(x, {0, 1});
  });
  for (const Tensor& g : got) EXPECT_TRUE(bit_equal(g, full, "gather_to_host"));
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
    Tensor n1 = ccl.neighbor_pad(x, {1}, {1}, {1}, PadMode::zeros, {1}, 0, 0, true);
    Tensor n2 = ccl.neighbor_pad(x, {1}, {1}, {1}, PadMode::zeros, {1}, 0, 0, true);
    Tensor n3 = ccl.neighbor_pad(x, {1}, {1}, {1}, PadMode::zeros, {1}, 0, 0, true);
    EXPECT_NE(n1.raw(), n2.raw());
    EXPECT_EQ(n1.raw(), n3.raw());
    EXPECT_EQ(ccl.pool_buffers(), 7u);  // ag dim 0: 2, ag dim 1: 1, rs: 2, np: 2
    ccl.reset();
    EXPECT_EQ(ccl.pool_buffers(), 0u);
    Tensor f = ccl.all_gather(x, 0, 1, true);
    EXPECT_TRUE(bit_equal(f, a));
  });
}

TEST(CclPersistent, AxisOfExtentOneIsANoOp) {
  run_spmd(local_cfg({1, 2}), [&](Device& d) {
    Tensor x = rnd({2, 3}, 1, DType::f32);
    EXPECT_EQ(d.ccl().all_gather(x, 0, 0).raw(), x.raw());
    EXPECT_EQ(d.ccl().reduce_scatter(x, 0, 0).raw(), x.raw());
    EXPECT_EQ(d.ccl().partition(x, 0, 0).raw(), x.raw());
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
                        d.ccl().neighbor_pad(Tensor({1, 3, 2}), {1}, {4}, {1}, PadMode::zeros, {1});
                      }),
             "ShapeError", "exceeds the shard length");
  // On 1×1 the same check runs locally.
  expect_all(outcomes({1, 1}, 5,
                      [](Device& d) {
                        d.ccl().neighbor_pad(Tensor({1, 3, 2}), {1}, {4}, {1}, PadMode::zeros, {1});
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

TEST(CclValidation, TwoDPadMismatchReachesTheWholeMesh) {
  // Only device 3 is wrong; its column and row partners, and device 0 (diagonal) all see it.
  expect_all(outcomes({2, 2}, 5,
                      [](Device& d) {
                        Tensor x({1, 4, d.rank() == 3 ? 5 : 4, 2});
                        d.ccl().neighbor_pad(x, {1, 2}, {1, 1}, {1, 1}, PadMode::zeros, {0, 1});
                      }),
             "ShapeError", "device 3");
}

TEST(CclValidation, NonexistentAxis) {
  expect_all(outcomes({1, 2}, 5,
                      [](Device& d) {
                        d.ccl().all_gather(Tensor({4, 2}), 0, 2);
                      }),
             "InvalidArgument", "mesh axis");
  expect_all(
      outcomes({1, 2}, 5,
               [](Device& d) {
                 d.ccl().neighbor_pad(Tensor({1, 4, 2}), {1}, {1}, {1}, PadMode::zeros, {-1});
               }),
      "InvalidArgument", "mesh axis");
}

TEST(CclValidation, BadHaloScatterBuffer) {
  Tensor padded({1, 6, 5, 2});
  EXPECT_THROW(CclManager::halo_scatter(Tensor({3, 2}), padded, 1, 1, 1), ShapeError);
}

}  // namespace
}  // namespace meshnn

namespace meshnn {
namespace {

// CFG split: each submesh has its own coordinates, groups and CclManager.
TEST(CclSubmesh, CollectivesStayInsideTheSubmesh) {
  for (auto [rows, cols, axis] :
       {std::tuple{2, 4, 1}, {2, 2, 0}, {2, 2, 1}, {1, 4, 1}, {1, 2, 1}, {2, 1, 0}}) {
    const Mesh mesh(rows, cols);
    std::vector<Tensor> got(mesh.size());
    std::vector<int> sub_rank(mesh.size());
    run_spmd(local_cfg({rows, cols}), [&, axis = axis](Device& d) {
      Device& s = d.submesh(axis);
      EXPECT_EQ(&s, &d.submesh(axis));  // cached
      EXPECT_EQ(s.mesh().axis_size(axis), d.axis_size(axis) / 2);
      sub_rank[d.rank()] = s.rank();
      Tensor x = Tensor::from_vector<float>({static_cast<float>(d.rank())}, {1});
      // Gather along both submesh axes: every submesh device ends with its submesh's ranks.
      Tensor y = s.ccl().gather_to_host(x.reshape({1, 1}), {0, 1});
      s.ccl().barrier();
      got[d.rank()] = y.clone();
    });
    const auto subs = mesh.split(axis);
    for (int r = 0; r < mesh.size(); ++r) {
      const auto& sm = subs[mesh.submesh_of(r, axis)];
      EXPECT_EQ(sm.ranks[sub_rank[r]], r);
      std::vector<float> want(sm.ranks.begin(), sm.ranks.end());
      EXPECT_TRUE(bit_equal(got[r], Tensor::from_vector(want, {sm.rows, sm.cols})))
          << rows << "x" << cols << " axis " << axis << " rank " << r;
    }
  }
}

}  // namespace
}  // namespace meshnn
