// Time-sharded layers equal the unsharded layers on local meshes, with the seam rows (the rows
// next to every shard boundary) checked on their own: halo bugs hide in whole-tensor norms.
#include "meshnn/layers/time_shard.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>

#include "graph/graph.h"
#include "meshnn/ops/resample.h"
#include "support/activation_ref.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::random_normal;

struct MeshShape {
  int rows, cols;
  std::vector<int> axes;  // time axes
};
const MeshShape kMeshes[] = {{1, 1, {1}},    {1, 2, {1}}, {2, 1, {0}},
                             {2, 2, {0, 1}}, {1, 4, {1}}, {2, 2, {1, 0}}};

std::string name(const MeshShape& m) {
  std::string s = std::to_string(m.rows) + "x" + std::to_string(m.cols) + " axes";
  for (int a : m.axes) s += " " + std::to_string(a);
  return s;
}

// Runs `op` sharded on mesh m over the full input `x` (real rows = x.dim(1)) and returns the
// gathered output with `real_out` rows (identical on every device; device 0's is returned).
Tensor run_sharded(const MeshShape& m, const Tensor& x, int64_t real_out,
                   const std::function<Tensor(const Tensor&, const TimeShard&)>& op) {
  MeshConfig cfg;
  cfg.rows = m.rows;
  cfg.cols = m.cols;
  cfg.threads_per_device = 1;
  cfg.timeout_seconds = 60;
  Tensor result;
  std::mutex mu;
  run_spmd(cfg, [&](Device& d) {
    TimeShard ts = m.rows * m.cols == 1 ? TimeShard() : TimeShard(d, m.axes);
    Tensor shard = ts.partition(x);
    Tensor y = op(shard, ts);
    Tensor full = ts.gather(y, real_out);
    if (d.rank() == 0) {
      std::lock_guard<std::mutex> lock(mu);
      result = full;
    }
  });
  return result;
}

// Whole tensor within 1e-6 relative L2 and every seam row within 1e-5 of the reference's scale.
void expect_equal_with_seams(const Tensor& got, const Tensor& ref, int64_t shard_out_rows,
                             const std::string& what) {
  ASSERT_EQ(got.shape(), ref.shape()) << what;
  EXPECT_TRUE(test::close_rel_l2(got, ref, 1e-6, what));
  const int64_t t = ref.dim(1);
  for (int64_t b = shard_out_rows; b < t; b += shard_out_rows) {
    const int64_t lo = std::max<int64_t>(0, b - 3), len = std::min<int64_t>(t, b + 3) - lo;
    EXPECT_TRUE(test::close_rel_l2(got.narrow(1, lo, len), ref.narrow(1, lo, len), 1e-5,
                                   what + " seam rows at " + std::to_string(b)));
  }
}

int parts(const MeshShape& m) { return m.rows * m.cols; }
int64_t shard_rows(int64_t real, int n) { return (real + n - 1) / n; }

TEST(TimeShard, Conv1dSameDilatedAndCausal) {
  const int64_t T = 77;  // not divisible by 2 or 4: exercises the padded tail
  Tensor x = random_normal({1, T, 12}, 1);
  Tensor w = random_normal({16, 12, 7}, 2, 0.2f), b = random_normal({16}, 3);
  for (const char* mode : {"zeros", "causal"}) {
    Conv1dConfig c;
    c.in_channels = 12;
    c.out_channels = 16;
    c.kernel_size = 7;
    c.dilation = 3;
    c.padding_mode = mode;
    Conv1d ref_conv(c, "ref");
    ref_conv.set_weights(w, b);
    Tensor ref = ref_conv.forward(x);
    for (const MeshShape& m : kMeshes) {
      Tensor got = run_sharded(m, x, T, [&](const Tensor& s, const TimeShard& ts) {
        Conv1d conv(c, "conv");
        conv.set_weights(w, b);
        return conv1d_sharded(conv, s, ts, T, conv.pad_left(), conv.pad_right());
      });
      expect_equal_with_seams(got, ref, shard_rows(T, parts(m)), std::string(mode) + " " + name(m));
    }
  }
}

TEST(TimeShard, StridedCausalConv1d) {
  // The BWE STFT shape: causal pad K − stride... here K 16, stride 4, front pad 12 → T/4 frames.
  const int64_t T = 64;
  Tensor x = random_normal({1, T, 1}, 4);
  Tensor w = random_normal({10, 1, 16}, 5, 0.3f);
  Conv1dConfig c;
  c.in_channels = 1;
  c.out_channels = 10;
  c.kernel_size = 16;
  c.stride = 4;
  c.padding = 12;  // applied on both sides by the layer; the causal form is below
  c.padding_mode = "causal";
  c.bias = false;
  c.kernel_size = 13;  // causal front pad eff_k − 1 = 12, out = (T + 12 − 13)/4 + 1 = T/4
  Tensor w13 = random_normal({10, 1, 13}, 6, 0.3f);
  Conv1d ref_conv(c, "ref");
  ref_conv.set_weights(w13, Tensor());
  Tensor ref = ref_conv.forward(x);
  ASSERT_EQ(ref.dim(1), T / 4);
  for (const MeshShape& m : kMeshes) {
    Tensor got = run_sharded(m, x, T / 4, [&](const Tensor& s, const TimeShard& ts) {
      Conv1d conv(c, "conv");
      conv.set_weights(w13, Tensor());
      return conv1d_sharded(conv, s, ts, T, conv.pad_left(), conv.pad_right());
    });
    expect_equal_with_seams(got, ref, T / 4 / parts(m), "strided " + name(m));
  }
  (void)w;
}

TEST(TimeShard, CausalHeightConv2d) {
  const int64_t T = 13;
  Tensor x = random_normal({1, T, 8, 6}, 7);
  Tensor w = random_normal({5, 6, 3, 3}, 8, 0.3f), b = random_normal({5}, 9);
  Conv2dConfig c;
  c.in_channels = 6;
  c.out_channels = 5;
  c.kernel_size = {3, 3};
  c.padding_mode = "causal_height";
  Conv2d ref_conv(c, "ref");
  ref_conv.set_weights(w, b);
  Tensor ref = ref_conv.forward(x);
  for (const MeshShape& m : kMeshes) {
    Tensor got = run_sharded(m, x, T, [&](const Tensor& s, const TimeShard& ts) {
      Conv2d conv(c, "conv");
      conv.set_weights(w, b);
      return conv2d_sharded(conv, s, ts, T, conv.pad_left(), conv.pad_right());
    });
    expect_equal_with_seams(got, ref, shard_rows(T, parts(m)), "conv2d " + name(m));
  }
}

TEST(TimeShard, ConvTranspose1dAllVocoderRates) {
  const int64_t T = 23;
  for (auto [k, s] : std::vector<std::pair<int64_t, int64_t>>{{11, 5}, {4, 2}, {12, 6}, {16, 8}}) {
    Tensor x = random_normal({1, T, 6}, 10 + k);
    Tensor w = random_normal({6, 4, k}, 11 + k, 0.3f), b = random_normal({4}, 12 + k);
    ConvTranspose1dConfig c;
    c.in_channels = 6;
    c.out_channels = 4;
    c.kernel_size = k;
    c.stride = s;
    ConvTranspose1d ref_conv(c, "ref");
    ref_conv.set_weights(w, b);
    Tensor ref = ref_conv.forward(x);
    ASSERT_EQ(ref.dim(1), s * T);
    for (const MeshShape& m : kMeshes) {
      Tensor got = run_sharded(m, x, s * T, [&](const Tensor& sh, const TimeShard& ts) {
        ConvTranspose1d conv(c, "conv");
        conv.set_weights(w, b);
        return graph::conv_transpose_node(conv)->run(sh, ts, T);  // the halo its node asks
      });
      expect_equal_with_seams(
          got, ref, s * shard_rows(T, parts(m)),
          "deconv k" + std::to_string(k) + " s" + std::to_string(s) + " " + name(m));
    }
  }
}

TEST(TimeShard, AntiAliasedActivation) {
  const int64_t T = 41, C = 9;
  Tensor x = random_normal({1, T, C}, 20);
  Tensor alpha = random_normal({C}, 21, 0.3f), beta = random_normal({C}, 22, 0.3f);
  layers::AntiAliasedActivation ref_act("act", C, layers::SnakeKind::snake_beta, true);
  ref_act.set_parameters(alpha, &beta);
  Tensor ref = ref_act.forward(x);
  for (const MeshShape& m : kMeshes) {
    Tensor got = run_sharded(m, x, T, [&](const Tensor& s, const TimeShard& ts) {
      return activation_sharded(ref_act, s, ts, T);
    });
    expect_equal_with_seams(got, ref, shard_rows(T, parts(m)), "activation " + name(m));
  }
}

TEST(TimeShard, HannAndKaiserUpsamplers) {
  const int64_t T = 35, C = 3;
  Tensor x = random_normal({1, T, C}, 30);
  const std::vector<float> hann = ops::hann_sinc_filter1d(3);
  const ops::UpsampleGeometry gh = ops::hann_upsample_geometry(3);
  const std::vector<float> kaiser = ops::kaiser_sinc_filter1d(0.25, 0.3, 12);
  const ops::UpsampleGeometry gk = test::kaiser_upsample_geometry(2, 12);
  for (auto [taps, g] : {std::pair{hann, gh}, std::pair{kaiser, gk}}) {
    Tensor ref = ops::upsample1d(x, taps, g);
    for (const MeshShape& m : kMeshes) {
      if (shard_rows(T, parts(m)) < g.pad) continue;  // halo must fit in a shard
      Tensor got = run_sharded(m, x, g.ratio * T, [&](const Tensor& s, const TimeShard& ts) {
        return upsample1d_sharded(s, taps, g, ts, T);
      });
      expect_equal_with_seams(got, ref, g.ratio * shard_rows(T, parts(m)),
                              "upsample x" + std::to_string(g.ratio) + " " + name(m));
    }
  }
}

TEST(TimeShard, HaloLargerThanShardIsAClearError) {
  Tensor x = random_normal({1, 6, 2}, 40);
  MeshShape m{1, 4, {1}};
  Conv1dConfig c;
  c.in_channels = 2;
  c.out_channels = 2;
  c.kernel_size = 11;
  c.dilation = 5;  // pad 25 > 2-row shards
  EXPECT_THROW(run_sharded(m, x, 6,
                           [&](const Tensor& s, const TimeShard& ts) {
                             Conv1d conv(c, "conv");
                             conv.set_weights(random_normal({2, 2, 11}, 1), random_normal({2}, 2));
                             return conv1d_sharded(conv, s, ts, 6, conv.pad_left(),
                                                   conv.pad_right());
                           }),
               ShapeError);
}

}  // namespace
}  // namespace meshnn
