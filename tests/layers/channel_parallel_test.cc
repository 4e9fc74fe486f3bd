// Column-parallel convs (channel tensor-parallel) equal the unsharded layers on local meshes,
// including channel counts that do not divide by the axis size, a chain that keeps activations
// channel-sharded, and channels × time on a 2×2 mesh.
#include "layers/channel_parallel.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <vector>

#include "meshnn/core/error.h"
#include "meshnn/layers/time_shard.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::random_normal;

struct MeshCase {
  int rows, cols;
  int axis;  // channel axis; the other axis is idle (replicated)
};
const MeshCase kMeshes[] = {{1, 1, 1}, {1, 2, 1}, {2, 1, 0}, {1, 4, 1}, {2, 2, 1}, {2, 2, 0}};

std::string name(const MeshCase& m) {
  return std::to_string(m.rows) + "x" + std::to_string(m.cols) + " channel axis " +
         std::to_string(m.axis);
}

MeshConfig mesh_config(int rows, int cols) {
  MeshConfig cfg;
  cfg.rows = rows;
  cfg.cols = cols;
  cfg.threads_per_device = 1;
  cfg.timeout_seconds = 60;
  return cfg;
}

// Runs `op` on every device of mesh m; returns every device's result (indexed by rank).
std::vector<Tensor> run_all(const MeshCase& m,
                            const std::function<Tensor(Device&, const ChannelShard&)>& op) {
  std::vector<Tensor> out(static_cast<size_t>(m.rows * m.cols));
  std::mutex mu;
  run_spmd(mesh_config(m.rows, m.cols), [&](Device& d) {
    ChannelShard cs = m.rows * m.cols == 1 ? ChannelShard() : ChannelShard(d, m.axis);
    Tensor y = op(d, cs);
    std::lock_guard<std::mutex> lock(mu);
    out[static_cast<size_t>(d.rank())] = y;
  });
  return out;
}

void expect_all_close(const std::vector<Tensor>& got, const Tensor& ref, const std::string& what) {
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_TRUE(got[r].defined()) << what << " rank " << r;
    EXPECT_TRUE(test::close_rel_l2(got[r], ref, 1e-6, what + " rank " + std::to_string(r)));
  }
}

// One layer type, sharded input and full input, output gathered on every device.
template <class Layer>
void check_layer(const typename ColumnParallel<Layer>::Config& cfg, const Tensor& w,
                 const Tensor& b, const Tensor& x, const std::string& what) {
  Layer ref_layer(cfg, "ref");
  ref_layer.set_weights(w, b);
  const Tensor ref = ref_layer.forward(x);
  for (const MeshCase& m : kMeshes) {
    for (ChannelInput in : {ChannelInput::sharded, ChannelInput::full}) {
      const std::string tag = what + " on " + name(m) +
                              (in == ChannelInput::sharded ? " sharded input" : " full input");
      auto got = run_all(m, [&](Device&, const ChannelShard& cs) {
        ColumnParallel<Layer> cp(cfg, cs, "cp");
        cp.set_weights(w, b);
        const Tensor xin = in == ChannelInput::sharded ? cs.partition(x) : x;
        Tensor y = cp.forward(xin, in);
        EXPECT_EQ(y.dim(-1), cs.shard_channels(cfg.out_channels)) << tag;
        return cp.gather_output(y);
      });
      expect_all_close(got, ref, tag);
    }
  }
}

TEST(ChannelParallel, Conv1dMatchesUnsharded) {
  // C_out 16 divides by 2 and 4; 10 only by 2; 7 by neither. C_in 6 does not divide by 4.
  for (int64_t c_out : {16, 10, 7}) {
    Conv1dConfig c;
    c.in_channels = 6;
    c.out_channels = c_out;
    c.kernel_size = 5;
    c.dilation = 2;
    Tensor x = random_normal({2, 33, 6}, 11);
    Tensor w = random_normal({c_out, 6, 5}, 12, 0.3f), b = random_normal({c_out}, 13);
    check_layer<Conv1d>(c, w, b, x, "conv1d c_out " + std::to_string(c_out));
  }
}

TEST(ChannelParallel, Conv1dStridedCausalNoBias) {
  Conv1dConfig c;
  c.in_channels = 8;
  c.out_channels = 9;
  c.kernel_size = 4;
  c.stride = 2;
  c.padding_mode = "causal";
  c.bias = false;
  Tensor x = random_normal({1, 40, 8}, 21);
  Tensor w = random_normal({9, 8, 4}, 22, 0.3f);
  check_layer<Conv1d>(c, w, Tensor(), x, "conv1d strided causal no bias");
}

TEST(ChannelParallel, Conv2dMatchesUnsharded) {
  for (int64_t c_out : {8, 6, 5}) {
    Conv2dConfig c;
    c.in_channels = 3;
    c.out_channels = c_out;
    c.kernel_size = {3, 3};
    c.padding_mode = "causal_height";
    Tensor x = random_normal({1, 12, 9, 3}, 31);
    Tensor w = random_normal({c_out, 3, 3, 3}, 32, 0.3f), b = random_normal({c_out}, 33);
    check_layer<Conv2d>(c, w, b, x, "conv2d c_out " + std::to_string(c_out));
  }
}

TEST(ChannelParallel, ConvTranspose1dMatchesUnsharded) {
  // Weight (C_in, C_out, K): the shard is a slice of dim 1.
  for (int64_t c_out : {12, 6, 5}) {
    ConvTranspose1dConfig c;
    c.in_channels = 10;
    c.out_channels = c_out;
    c.kernel_size = 8;
    c.stride = 4;
    Tensor x = random_normal({1, 17, 10}, 41);
    Tensor w = random_normal({10, c_out, 8}, 42, 0.3f), b = random_normal({c_out}, 43);
    check_layer<ConvTranspose1d>(c, w, b, x, "conv_transpose1d c_out " + std::to_string(c_out));
  }
}

TEST(ChannelParallel, LoadSlicesCheckpointTensors) {
  // Weight-norm keys go through the full mapping first (the ConvTranspose1d norm is per input
  // channel, i.e. over the sharded C_out dim), then the slice.
  ConvTranspose1dConfig c;
  c.in_channels = 6;
  c.out_channels = 7;
  c.kernel_size = 4;
  c.stride = 2;
  std::map<std::string, Tensor> state{
      {"up.weight_g", test::random_uniform({6, 1, 1}, 50, 0.5f, 1.5f)},
      {"up.weight_v", random_normal({6, 7, 4}, 51)},
      {"up.bias", random_normal({7}, 52)}};
  ConvTranspose1d ref_layer(c, "ref");
  ref_layer.load(state, "up");
  Tensor x = random_normal({1, 20, 6}, 53);
  const Tensor ref = ref_layer.forward(x);
  for (const MeshCase& m : kMeshes) {
    auto got = run_all(m, [&](Device&, const ChannelShard& cs) {
      ColumnParallelConvTranspose1d cp(c, cs, "up");
      cp.load(state, "up");
      return cp.gather_output(cp.forward(cs.partition(x)));
    });
    expect_all_close(got, ref, "load weight-norm on " + name(m));
  }
}

TEST(ChannelParallel, ChainKeepsActivationsChannelSharded) {
  // conv (6 → 10) → conv (10 → 7) → transposed conv (7 → 5): only the last output is gathered.
  Conv1dConfig c1;
  c1.in_channels = 6;
  c1.out_channels = 10;
  c1.kernel_size = 3;
  Conv1dConfig c2;
  c2.in_channels = 10;
  c2.out_channels = 7;
  c2.kernel_size = 5;
  c2.dilation = 3;
  ConvTranspose1dConfig c3;
  c3.in_channels = 7;
  c3.out_channels = 5;
  c3.kernel_size = 4;
  c3.stride = 2;
  Tensor w1 = random_normal({10, 6, 3}, 61, 0.3f), b1 = random_normal({10}, 62);
  Tensor w2 = random_normal({7, 10, 5}, 63, 0.3f), b2 = random_normal({7}, 64);
  Tensor w3 = random_normal({7, 5, 4}, 65, 0.3f), b3 = random_normal({5}, 66);
  Tensor x = random_normal({1, 29, 6}, 67);

  Conv1d r1(c1), r2(c2);
  ConvTranspose1d r3(c3);
  r1.set_weights(w1, b1);
  r2.set_weights(w2, b2);
  r3.set_weights(w3, b3);
  const Tensor ref = r3.forward(r2.forward(r1.forward(x)));

  for (const MeshCase& m : kMeshes) {
    auto got = run_all(m, [&](Device&, const ChannelShard& cs) {
      ColumnParallelConv1d l1(c1, cs, "l1"), l2(c2, cs, "l2");
      ColumnParallelConvTranspose1d l3(c3, cs, "l3");
      l1.set_weights(w1, b1);
      l2.set_weights(w2, b2);
      l3.set_weights(w3, b3);
      Tensor h = l1.forward(x, ChannelInput::full);
      EXPECT_EQ(h.dim(-1), cs.shard_channels(10));
      h = l2.forward(h);
      EXPECT_EQ(h.dim(-1), cs.shard_channels(7));
      return l3.gather_output(l3.forward(h));
    });
    expect_all_close(got, ref, "chain on " + name(m));
  }
}

TEST(ChannelParallel, ChannelsTimesTimeOn2x2) {
  // Channels on one axis, time on the other; T = 37 is not divisible by 2 (padded tail).
  const int64_t T = 37;
  Conv1dConfig c;
  c.in_channels = 6;
  c.out_channels = 7;
  c.kernel_size = 7;
  c.dilation = 2;
  Tensor w = random_normal({7, 6, 7}, 71, 0.3f), b = random_normal({7}, 72);
  Tensor x = random_normal({1, T, 6}, 73);
  Conv1d ref_layer(c);
  ref_layer.set_weights(w, b);
  const Tensor ref = ref_layer.forward(x);
  for (int channel_axis : {0, 1}) {
    std::vector<Tensor> got(4);
    std::mutex mu;
    run_spmd(mesh_config(2, 2), [&](Device& d) {
      ChannelShard cs(d, channel_axis);
      TimeShard ts(d, {1 - channel_axis});
      ColumnParallelConv1d cp(c, cs, "ct");
      cp.set_weights(w, b);
      Tensor x_tc = cs.partition(ts.partition(x));  // (1, S, C_in_pad/2)
      Tensor y = conv1d_sharded(cp.local(), cp.gather_input(x_tc), ts, T);
      Tensor full = ts.gather(cp.gather_output(y), T);
      std::lock_guard<std::mutex> lock(mu);
      got[static_cast<size_t>(d.rank())] = full;
    });
    expect_all_close(got, ref, "2x2 channel axis " + std::to_string(channel_axis));
  }
}

TEST(ChannelParallel, PartitionPadsAndGatherTrims) {
  Tensor x = random_normal({2, 3, 5}, 81);
  run_spmd(mesh_config(1, 4), [&](Device& d) {
    ChannelShard cs(d, 1);
    EXPECT_EQ(cs.padded(5), 8);
    EXPECT_EQ(cs.shard_channels(5), 2);
    Tensor p = cs.partition(x);
    ASSERT_EQ(p.shape(), Shape({2, 3, 2}));
    if (cs.index() >= 3) {  // channels 6, 7 are padding
      for (int64_t i = 0; i < p.numel(); ++i) EXPECT_EQ(p.data<float>()[i], 0.f);
    }
    EXPECT_TRUE(test::bit_equal(cs.gather(p, 5), x, "round trip"));
  });
}

TEST(ChannelParallel, BadConfigs) {
  Conv1dConfig c;
  c.in_channels = 4;
  c.out_channels = 6;
  c.kernel_size = 3;
  // Axis not in the mesh.
  EXPECT_THROW(run_spmd(mesh_config(1, 2), [](Device& d) { ChannelShard cs(d, 2); }),
               InvalidArgument);
  EXPECT_THROW(run_spmd(mesh_config(1, 2), [](Device& d) { ChannelShard cs(d, -1); }),
               InvalidArgument);
  // Bad layer config.
  Conv1dConfig bad = c;
  bad.out_channels = 0;
  EXPECT_THROW(ColumnParallelConv1d(bad, ChannelShard(), "bad"), InvalidArgument);
  // Weight shapes: the full weight is expected, not a shard.
  run_spmd(mesh_config(1, 2), [&](Device& d) {
    ChannelShard cs(d, 1);
    ColumnParallelConv1d cp(c, cs, "cp");
    EXPECT_THROW(cp.set_weights(random_normal({3, 4, 3}, 1), random_normal({6}, 2)), WeightError);
    EXPECT_THROW(cp.set_weights(random_normal({6, 4, 3}, 1), random_normal({3}, 2)), WeightError);
    EXPECT_THROW(cp.set_weights(random_normal({6, 4, 3}, 1), Tensor()), WeightError);
    ConvTranspose1dConfig tc;
    tc.in_channels = 4;
    tc.out_channels = 6;
    tc.kernel_size = 4;
    tc.stride = 2;
    ColumnParallelConvTranspose1d ct(tc, cs, "ct");
    // Conv layout (C_out, C_in, K) handed to a transposed conv.
    EXPECT_THROW(ct.set_weights(random_normal({6, 4, 4}, 3), random_normal({6}, 4)), WeightError);
    // Missing key: the message names it.
    std::map<std::string, Tensor> empty;
    try {
      cp.load(empty, "block.conv");
      ADD_FAILURE() << "missing key accepted";
    } catch (const WeightError& e) {
      EXPECT_NE(std::string(e.what()).find("block.conv"), std::string::npos) << e.what();
    }
    // Input channels that match neither the shard nor the full width.
    cp.set_weights(random_normal({6, 4, 3}, 1), random_normal({6}, 2));
    EXPECT_THROW(cp.forward(random_normal({1, 8, 3}, 5)), ShapeError);
    EXPECT_THROW(cp.forward(random_normal({1, 8, 2}, 5), ChannelInput::full), ShapeError);
    EXPECT_THROW(cs.gather(random_normal({1, 8, 4}, 6), 6), ShapeError);
  });
}

}  // namespace
}  // namespace meshnn
