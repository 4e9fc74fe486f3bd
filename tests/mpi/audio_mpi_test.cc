// Time-sharded audio layers and the LTX-2.3 decode on the MPI backend (one process per device;
// CTest runs this binary under mpiexec -np 2 and -np 4). For every op and mesh shape, the gathered
// MPI result must
//   - equal the unsharded result computed inside this rank (default TimeShard) to rel L2 ≤ 1e-6,
//     with the seam rows (around every shard boundary) checked on their own, and
//   - equal the local-backend sharded result on the same mesh shape bit for bit (rank 0 runs the
//     local mesh in-process; the arithmetic and the collectives are identical on both backends).
// Inputs come from fixed seeds, so every rank holds the same full tensors.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <mutex>

#include "graph/graph.h"
#include "mesh/mpi_comm.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/ops/resample.h"
#include "models/ltx/audio_decoder.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::random_normal;

int world_rank() { return mesh_detail::mpi_world_rank(); }
int world_size() { return mesh_detail::mpi_world_size(); }

struct MeshShape {
  int rows, cols;
  std::vector<int> axes;  // time axes (with 2, axes[0] is the major one)
};

std::vector<MeshShape> meshes() {
  switch (world_size()) {
    case 1:
      return {{1, 1, {}}};
    case 2:
      return {{1, 2, {1}}, {2, 1, {0}}};
    case 4:
      return {{2, 2, {0, 1}}, {2, 2, {1, 0}}, {1, 4, {1}}};
    default:
      return {{1, world_size(), {1}}};
  }
}

int parts(const MeshShape& m) { return m.rows * m.cols; }
int64_t shard_rows(int64_t real, int n) { return (real + n - 1) / n; }

std::string name(const MeshShape& m) {
  std::string s = std::to_string(m.rows) + "x" + std::to_string(m.cols) + " axes";
  for (int a : m.axes) s += " " + std::to_string(a);
  return s;
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

TimeShard make_ts(Device& d, const MeshShape& m) {
  return m.axes.empty() ? TimeShard() : TimeShard(d, m.axes);
}

// Op on this device's shard → this device's output shard.
using ShardOp = std::function<Tensor(const Tensor& shard, const TimeShard& ts)>;

struct Sharded {
  Tensor mpi;    // gathered MPI result on this rank
  Tensor local;  // gathered local-backend result (rank 0 only; empty elsewhere)
};

// Runs `op` time-sharded on mesh m over the full input `x` on the MPI backend, and on rank 0 also
// on an in-process local mesh of the same shape; both gathered to `real_out` rows.
Sharded run_sharded(const MeshShape& m, const Tensor& x, int64_t real_out, const ShardOp& op) {
  Sharded r;
  run_spmd(cfg(m, Backend::mpi), [&](Device& d) {
    EXPECT_EQ(d.rank(), world_rank());
    const TimeShard ts = make_ts(d, m);
    r.mpi = ts.gather(op(ts.partition(x), ts), real_out).clone();
  });
  if (world_rank() == 0) {
    std::mutex mu;
    run_spmd(cfg(m, Backend::local), [&](Device& d) {
      const TimeShard ts = make_ts(d, m);
      Tensor y = ts.gather(op(ts.partition(x), ts), real_out);
      if (d.rank() == 0) {
        std::lock_guard<std::mutex> lock(mu);
        r.local = y.clone();
      }
    });
  }
  return r;
}

// got vs the unsharded `ref` (whole tensor and the rows within `seam` of every boundary, which
// sits every `shard_out_rows` output rows), and vs the local backend bit for bit.
// tol: relative L2 bound against the unsharded run.
void expect_matches(const Sharded& got, const Tensor& ref, int64_t shard_out_rows, int64_t seam,
                    const std::string& what, double tol = 1e-6) {
  ASSERT_EQ(got.mpi.shape(), ref.shape()) << what;
  EXPECT_TRUE(test::close_rel_l2(got.mpi, ref, tol, what + " mpi vs unsharded"));
  const bool have_local = got.local.defined();
  if (have_local) {
    EXPECT_TRUE(test::bit_equal(got.mpi, got.local, what + " mpi vs local"));
  }
  const int64_t t = ref.dim(1);
  for (int64_t b = shard_out_rows; b < t; b += shard_out_rows) {
    const int64_t lo = std::max<int64_t>(0, b - seam), len = std::min<int64_t>(t, b + seam) - lo;
    const std::string at = what + " seam rows at " + std::to_string(b);
    EXPECT_TRUE(test::close_rel_l2(got.mpi.narrow(1, lo, len), ref.narrow(1, lo, len), tol,
                                   at + " mpi vs unsharded"));
    if (have_local) {
      EXPECT_TRUE(test::bit_equal(got.mpi.narrow(1, lo, len).clone(),
                                  got.local.narrow(1, lo, len).clone(), at + " mpi vs local"));
    }
  }
}

TEST(MpiTimeShard, Conv1dDilatedSameAndCausal) {
  const int64_t T = 45;  // not divisible by 2 or 4: exercises the padded tail
  const Tensor x = random_normal({1, T, 4}, 101);
  const Tensor w = random_normal({5, 4, 5}, 102, 0.3f), b = random_normal({5}, 103);
  for (const char* mode : {"zeros", "causal"}) {
    Conv1dConfig c;
    c.in_channels = 4;
    c.out_channels = 5;
    c.kernel_size = 5;
    c.dilation = 3;  // 'same' halo 6 | 6, causal halo 12 | 0: fits a 12-row shard
    c.padding_mode = mode;
    Conv1d ref_conv(c, "ref");
    ref_conv.set_weights(w, b);
    const Tensor ref = ref_conv.forward(x);
    for (const MeshShape& m : meshes()) {
      const Sharded got = run_sharded(m, x, T, [&](const Tensor& s, const TimeShard& ts) {
        Conv1d conv(c, "conv");
        conv.set_weights(w, b);
        return conv1d_sharded(conv, s, ts, T, conv.pad_left(), conv.pad_right());
      });
      expect_matches(got, ref, shard_rows(T, parts(m)), 3,
                     std::string("conv1d ") + mode + " " + name(m));
    }
  }
}

TEST(MpiTimeShard, Conv2dCausalHeight) {
  const int64_t T = 13;
  const Tensor x = random_normal({1, T, 6, 3}, 111);
  const Tensor w = random_normal({4, 3, 3, 3}, 112, 0.3f), b = random_normal({4}, 113);
  Conv2dConfig c;
  c.in_channels = 3;
  c.out_channels = 4;
  c.kernel_size = {3, 3};
  c.padding_mode = "causal_height";
  Conv2d ref_conv(c, "ref");
  ref_conv.set_weights(w, b);
  const Tensor ref = ref_conv.forward(x);
  for (const MeshShape& m : meshes()) {
    const Sharded got = run_sharded(m, x, T, [&](const Tensor& s, const TimeShard& ts) {
      Conv2d conv(c, "conv");
      conv.set_weights(w, b);
      return conv2d_sharded(conv, s, ts, T, conv.pad_left(), conv.pad_right());
    });
    expect_matches(got, ref, shard_rows(T, parts(m)), 2, "conv2d causal_height " + name(m));
  }
}

TEST(MpiTimeShard, ConvTranspose1d) {
  const int64_t T = 23;
  for (auto [k, s] : std::vector<std::pair<int64_t, int64_t>>{{11, 5}, {4, 2}}) {
    const Tensor x = random_normal({1, T, 4}, 120 + k);
    const Tensor w = random_normal({4, 3, k}, 121 + k, 0.3f), b = random_normal({3}, 122 + k);
    ConvTranspose1dConfig c;
    c.in_channels = 4;
    c.out_channels = 3;
    c.kernel_size = k;
    c.stride = s;
    ConvTranspose1d ref_conv(c, "ref");
    ref_conv.set_weights(w, b);
    const Tensor ref = ref_conv.forward(x);
    ASSERT_EQ(ref.dim(1), s * T);
    for (const MeshShape& m : meshes()) {
      const Sharded got = run_sharded(m, x, s * T, [&](const Tensor& sh, const TimeShard& ts) {
        ConvTranspose1d conv(c, "conv");
        conv.set_weights(w, b);
        return graph::conv_transpose_node(conv)->run(sh, ts, T);  // the halo its node asks
      });
      expect_matches(got, ref, s * shard_rows(T, parts(m)), 2 * s,
                     "deconv k" + std::to_string(k) + " s" + std::to_string(s) + " " + name(m));
    }
  }
}

TEST(MpiTimeShard, AntiAliasedActivation) {
  const int64_t T = 41, C = 5;
  const Tensor x = random_normal({1, T, C}, 130);
  const Tensor alpha = random_normal({C}, 131, 0.3f), beta = random_normal({C}, 132, 0.3f);
  layers::AntiAliasedActivation act("act", C, layers::SnakeKind::snake_beta, true);
  act.set_parameters(alpha, &beta);
  const Tensor ref = act.forward(x);
  for (const MeshShape& m : meshes()) {
    const Sharded got = run_sharded(m, x, T, [&](const Tensor& s, const TimeShard& ts) {
      return activation_sharded(act, s, ts, T);
    });
    expect_matches(got, ref, shard_rows(T, parts(m)), 3, "activation " + name(m));
  }
}

TEST(MpiTimeShard, HannUpsampleX3) {
  const int64_t T = 35, C = 3;
  const Tensor x = random_normal({1, T, C}, 140);
  const std::vector<float> taps = ops::hann_sinc_filter1d(3);
  const ops::UpsampleGeometry g = ops::hann_upsample_geometry(3);
  const Tensor ref = ops::upsample1d(x, taps, g);
  for (const MeshShape& m : meshes()) {
    ASSERT_GE(shard_rows(T, parts(m)), g.pad) << "halo must fit in a shard";
    const Sharded got = run_sharded(m, x, g.ratio * T, [&](const Tensor& s, const TimeShard& ts) {
      return upsample1d_sharded(s, taps, g, ts, T);
    });
    expect_matches(got, ref, g.ratio * shard_rows(T, parts(m)), 3 * g.ratio,
                   "upsample x3 " + name(m));
  }
}

TEST(MpiLtxAudio, DecodeShardedEqualsUnsharded) {
  const io::SafetensorsFile file =
      io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  const int64_t T = 11;  // 4 devices get ≥ 2 frames each
  const Tensor latent = random_normal({1, 8, T, 16}, 77, 0.8f);
  const Tensor ref = models::LtxAudioDecoder::load(file, Precision::fp32)->decode(latent);
  for (const MeshShape& m : meshes()) {
    // One decode per mesh shape: the minor-major 2×2 order adds nothing the layer tests miss.
    if (m.axes.size() == 2 && m.axes[0] == 1) continue;
    const auto decode = [&](Device& d) {
      return models::LtxAudioDecoder::load(file, Precision::fp32)->decode(latent, make_ts(d, m));
    };
    Sharded got;
    run_spmd(cfg(m, Backend::mpi), [&](Device& d) { got.mpi = decode(d).clone(); });
    if (world_rank() == 0) {
      std::mutex mu;
      run_spmd(cfg(m, Backend::local), [&](Device& d) {
        Tensor y = decode(d);
        if (d.rank() == 0) {
          std::lock_guard<std::mutex> lock(mu);
          got.local = y.clone();
        }
      });
    }
    // A shard of S latent frames becomes 4·S mel frames · 160 hop · 3 (BWE) samples at 48 kHz.
    const int64_t per = 4 * shard_rows(T, parts(m)) * 480;
    // 4e-6: layers on Winograd (layers/conv_algorithm.h) start their tiles at each shard's first
    // row, so their rounding (≤ 1.6e-6 per layer) differs between sharded and unsharded runs.
    expect_matches(got, ref, per, 64, "decode " + name(m), 4e-6);
  }
}

}  // namespace
}  // namespace meshnn
