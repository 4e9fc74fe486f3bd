#include "meshnn/layers/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/audio_ref.h"
#include "kernels/snake.h"
#include "meshnn/core/cpu.h"
#include "meshnn/ops/filter_design.h"
#include "support/activation_ref.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::layers {
namespace {

using test::close_rel_l2;
namespace ref = test::ref;

struct Made {
  AntiAliasedActivation act;
  std::vector<double> alpha, inv;  // exact (double) runtime parameters for the reference
};

// Random log-scale SnakeBeta parameters, as in the released checkpoints.
Made make_act(int64_t C, uint64_t seed, SnakeKind kind = SnakeKind::snake_beta, int64_t align = 1) {
  const Tensor a = test::random_normal({C}, seed, 0.5f);
  const Tensor b = test::random_normal({C}, seed + 1, 0.5f);
  Made m{AntiAliasedActivation("act", C, kind, true, align), {}, {}};
  m.act.set_parameters(a, &b);
  for (int64_t c = 0; c < C; ++c) {
    const double al = std::exp(static_cast<double>(a.data<float>()[c]));
    const double be =
        kind == SnakeKind::snake_beta ? std::exp(static_cast<double>(b.data<float>()[c])) : al;
    m.alpha.push_back(al);
    m.inv.push_back(1.0 / (be + 1e-9));
  }
  return m;
}

ref::Seq reference(const Made& m, const Tensor& x) {
  const std::vector<double> f = ops::kaiser_sinc_filter1d_f64(0.25, 0.3, 12);
  return ref::activation1d(ref::from_tensor(x), f, f, m.alpha, m.inv);
}

std::string tag(int64_t C, int64_t T) {
  return "C=" + std::to_string(C) + " T=" + std::to_string(T);
}

TEST(AntiAliasedActivation, FusedMatchesFloat64Reference) {
  uint64_t seed = 1000;
  for (int64_t C : {1, 24, 100, 512})
    for (int64_t T : {1, 2, 3, 5, 9, 37, 333}) {
      if (C == 512 && T == 333)
        continue;  // the double reference is slow; 100 × 333 covers multi-block
      const Made m = make_act(C, seed += 2);
      const Tensor x = test::random_normal({2, T, C}, ++seed, 2.f);
      const Tensor want = ref::to_tensor(reference(m, x));
      EXPECT_TRUE(close_rel_l2(m.act.forward(x), want, 2e-6, "fused " + tag(C, T)));
      EXPECT_TRUE(
          close_rel_l2(test::activation_scalar(m.act, x), want, 2e-6, "fused scalar " + tag(C, T)));
      EXPECT_TRUE(
          close_rel_l2(test::activation_unfused(m.act, x), want, 2e-6, "unfused " + tag(C, T)));
    }
}

// The widest path (AVX-512F where the CPU has it) against the forced AVX2 one: bit-identical for
// every channel-block width (full 16, masked tails) and for shard bounds past [0, n) (halo rows).
TEST(AntiAliasedActivation, EveryIsaPathGivesTheSameBits) {
  const CpuFeatures& f = cpu_features();
  if (!(f.avx2 && f.fma)) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  uint64_t seed = 2500;
  for (int64_t C : {1, 7, 8, 15, 16, 17, 24, 100})
    for (int64_t n : {1, 3, 161, 400}) {
      const Made m = make_act(C, seed += 2);
      const int64_t halo = 6, rows = n + 2 * halo;
      const Tensor x = test::random_normal({2, rows, C}, ++seed, 2.f);
      const std::vector<float> taps = ops::kaiser_sinc_filter1d(0.25, 0.3, 12);
      std::vector<float> alpha(C), inv(C);
      for (int64_t c = 0; c < C; ++c) {
        alpha[c] = static_cast<float>(m.alpha[c]);
        inv[c] = static_cast<float>(m.inv[c]);
      }
      for (const auto& [lo, hi] : {std::pair<int64_t, int64_t>{0, n}, {-halo, n + halo}, {-2, n}}) {
        Tensor wide({2, n, C}), narrow({2, n, C});
        const float* x0 = x.data<float>() + halo * C;
        for (auto [isa, out] :
             {std::pair{kernels::ActIsa::best, &wide}, std::pair{kernels::ActIsa::avx2, &narrow}})
          kernels::aa_snake_fused_f32(x0, rows * C, 2, C, lo, hi, n, taps.data(), taps.data(),
                                      alpha.data(), inv.data(), out->data<float>(), n * C, isa);
        EXPECT_EQ(std::memcmp(wide.data<float>(), narrow.data<float>(), wide.numel() * 4), 0)
            << tag(C, n) << " lo " << lo << " hi " << hi
            << (f.avx512f ? " (AVX-512F vs AVX2)" : " (AVX2 both)");
      }
    }
}

TEST(AntiAliasedActivation, FusedEqualsUnfused) {
  uint64_t seed = 2000;
  for (int64_t C : {1, 24, 100, 512, 1536})
    for (int64_t T : {1, 4, 11, 161, 700}) {
      const Made m = make_act(C, seed += 2);
      const Tensor x = test::random_normal({1, T, C}, ++seed, 2.f);
      const Tensor fused = m.act.forward(x);
      EXPECT_TRUE(close_rel_l2(fused, test::activation_unfused(m.act, x), 1e-6,
                               "fused vs unfused " + tag(C, T)));
      EXPECT_TRUE(close_rel_l2(fused, test::activation_unfused(m.act, x, true), 1e-6,
                               "fused vs unfused mac " + tag(C, T)));
    }
}

TEST(AntiAliasedActivation, MatchesTorchGoldens) {
  const auto g = test::load_fixture("audio_kernels.safetensors");
  struct Case {
    const char* name;
    SnakeKind kind;
    bool logscale;
  };
  for (const Case c : {Case{"aa_sb_c24_t37", SnakeKind::snake_beta, true},
                       Case{"aa_sb_c100_t9", SnakeKind::snake_beta, true},
                       Case{"aa_sb_c1_t3", SnakeKind::snake_beta, true},
                       Case{"aa_sb_c512_t20", SnakeKind::snake_beta, true},
                       Case{"aa_snake_c24_t33", SnakeKind::snake, false}}) {
    const std::string n = c.name;
    const Tensor& x = g.at(n + ".x");
    AntiAliasedActivation act(n, x.dim(2), c.kind, c.logscale);
    std::map<std::string, Tensor> sd = {{n + ".act.alpha", g.at(n + ".alpha")}};
    if (c.kind == SnakeKind::snake_beta) sd.emplace(n + ".act.beta", g.at(n + ".beta"));
    act.load_state_dict(sd, n + ".");
    EXPECT_TRUE(close_rel_l2(act.forward(x), g.at(n + ".out"), 1e-5, n + " fused"));
    EXPECT_TRUE(
        close_rel_l2(test::activation_unfused(act, x), g.at(n + ".out"), 1e-5, n + " unfused"));
    EXPECT_TRUE(close_rel_l2(snake_forward(g.at(n + ".up"), act.params()), g.at(n + ".act"), 1e-6,
                             n + " snake"));
  }
}

TEST(AntiAliasedActivation, ShardedEqualsUnshardedBitForBit) {
  // Time shards with explicit ±context_rows() halos reproduce the whole-sequence result exactly,
  // including shards shorter than the halo and a global T padded up to a multiple of the shard
  // count.
  const int64_t C = 24, h = AntiAliasedActivation::context_rows();
  ASSERT_EQ(h, 5);
  const Made m = make_act(C, 77);
  for (int64_t T_real : {1000, 997, 13, 7}) {
    for (int64_t shards : {2, 3, 4}) {
      const int64_t n = (T_real + shards - 1) / shards;  // rows per shard after t-padding
      const Tensor x = test::random_normal({2, n * shards, C}, 5 + T_real, 2.f);
      const Tensor whole = m.act.forward(x.narrow(1, 0, T_real));
      for (int64_t s = 0; s < shards; ++s) {
        const int64_t g0 = s * n;
        // Halo exchange: real neighbour rows where they exist (a device past the end sends
        // nothing).
        const int64_t lc = std::min(h, g0), rc = std::clamp<int64_t>(n * shards - g0 - n, 0, h);
        const Tensor slab = x.narrow(1, g0 - lc, lc + n + rc);
        const Tensor out = m.act.forward_padded(slab, lc, rc, g0, T_real);
        const int64_t real = std::clamp<int64_t>(T_real - g0, 0, n);
        if (real == 0) continue;
        const std::string what = "T=" + std::to_string(T_real) + " shard " + std::to_string(s) +
                                 "/" + std::to_string(shards);
        EXPECT_TRUE(test::bit_equal(out.narrow(1, 0, real), whole.narrow(1, g0, real), what));
        // Seam rows on their own: the first and last 6 rows of the shard.
        for (int64_t r :
             {int64_t{0}, std::min<int64_t>(5, real - 1), std::max<int64_t>(0, real - 6), real - 1})
          EXPECT_TRUE(test::bit_equal(out.narrow(1, r, 1), whole.narrow(1, g0 + r, 1),
                                      what + " seam row " + std::to_string(r)));
      }
    }
  }
}

TEST(AntiAliasedActivation, ChannelPaddingKeepsPaddedChannelsZero) {
  const int64_t C = 24;
  const Tensor a = test::random_normal({C}, 1, 0.5f), b = test::random_normal({C}, 2, 0.5f);
  AntiAliasedActivation plain("plain", C, SnakeKind::snake_beta, true);
  AntiAliasedActivation padded("padded", C, SnakeKind::snake_beta, true, 32);
  plain.set_parameters(a, &b);
  padded.set_parameters(a, &b);
  ASSERT_EQ(padded.channels(), 32);
  EXPECT_EQ(padded.params().alpha[30], 0.f);
  const Tensor x = test::random_normal({1, 50, C}, 3, 2.f);
  Tensor xp({1, 50, 32});  // x with zero channels appended up to 32
  for (int64_t t = 0; t < 50; ++t)
    std::memcpy(xp.data<float>() + t * 32, x.data<float>() + t * C, C * sizeof(float));
  const Tensor y = padded.forward(xp);
  EXPECT_TRUE(test::bit_equal(y.narrow(2, 0, C), plain.forward(x)));
  for (int64_t t = 0; t < 50; ++t)
    for (int64_t c = C; c < 32; ++c) EXPECT_EQ(y.data<float>()[t * 32 + c], 0.f);
}

TEST(AntiAliasedActivation, LoadsCheckpointFilters) {
  const int64_t C = 4;
  AntiAliasedActivation act("resblocks.0.activations.0", C, SnakeKind::snake_beta, true);
  std::vector<float> up(12, 0.f), down(12, 0.f);
  up[5] = 0.5f;   // y[2t+1] = X(t) … a trivially checkable filter pair
  down[5] = 1.f;  // out[t] = z[2t]
  std::map<std::string, Tensor> sd = {
      {"p.act.alpha", test::random_normal({C}, 1)},
      {"p.act.beta", test::random_normal({C}, 2)},
      {"p.upsample.filter", Tensor::from_vector(up, {1, 1, 12})},
      {"p.downsample.lowpass.filter", Tensor::from_vector(down, {1, 1, 12})}};
  act.load_state_dict(sd, "p.");
  EXPECT_EQ(act.up_taps(), up);
  EXPECT_EQ(act.down_taps(), down);
  sd["p.upsample.filter"] = Tensor({1, 1, 11});
  EXPECT_THROW(act.load_state_dict(sd, "p."), WeightError);
}

TEST(AntiAliasedActivation, BadInput) {
  const int64_t C = 24;
  AntiAliasedActivation act("resblocks.3.activations.1", C, SnakeKind::snake_beta, true);
  EXPECT_THROW(act.forward(test::random_normal({1, 10, C}, 1)), InvalidArgument);  // not loaded
  // Missing / misshaped weights name the key.
  try {
    act.load_state_dict({{"x.act.alpha", test::random_normal({C}, 1)}}, "x.");
    ADD_FAILURE() << "expected WeightError";
  } catch (const WeightError& e) {
    EXPECT_NE(std::string(e.what()).find("x.act.beta"), std::string::npos) << e.what();
  }
  const Tensor a = test::random_normal({C}, 1), b = test::random_normal({C + 1}, 2);
  EXPECT_THROW(act.set_parameters(a, &b), WeightError);
  EXPECT_THROW(act.set_parameters(a, nullptr), WeightError);
  act.set_parameters(a, &a);
  EXPECT_THROW(act.forward(test::random_normal({10, C}, 1)), ShapeError);         // rank
  EXPECT_THROW(act.forward(test::random_normal({1, 10, C + 1}, 1)), ShapeError);  // channels ≠ α
  EXPECT_THROW(act.forward(Tensor({1, 10, C}, DType::bf16)), ShapeError);         // dtype
  EXPECT_THROW(act.forward(Tensor({1, 0, C})), ShapeError);                       // empty
  const Tensor slab = test::random_normal({1, 30, C}, 3);
  EXPECT_THROW(act.forward_padded(slab, 3, 5, 100, 1000), ShapeError);    // left halo too short
  EXPECT_THROW(act.forward_padded(slab, 5, 2, 100, 1000), ShapeError);    // right halo too short
  EXPECT_THROW(act.forward_padded(slab, 15, 15, 100, 1000), ShapeError);  // no interior rows
  EXPECT_THROW(act.forward_padded(slab, -1, 5, 100, 1000), InvalidArgument);
  EXPECT_NO_THROW(act.forward_padded(slab, 0, 5, 0, 1000));  // global start needs no left halo
  Tensor out = Tensor::empty({1, 9, C});
  EXPECT_THROW(act.forward_into(slab, out), ShapeError);
}

TEST(Snake, PlainSnakeMatchesFloat64AndScalar) {
  for (int64_t C : {1, 24, 100, 512}) {
    const Made m = make_act(C, 9 + C, SnakeKind::snake);
    const Tensor x = test::random_normal({2, 13, C}, C, 3.f);
    const Tensor want = ref::to_tensor(ref::snake(ref::from_tensor(x), m.alpha, m.inv));
    EXPECT_TRUE(
        close_rel_l2(snake_forward(x, m.act.params()), want, 1e-6, "snake C=" + std::to_string(C)));
    EXPECT_TRUE(close_rel_l2(snake_forward(x, m.act.params(), true), want, 1e-6, "snake scalar"));
  }
}

}  // namespace
}  // namespace meshnn::layers

namespace meshnn::layers {
namespace {

// Prints the measured error figures quoted in the report (the assertions above carry the bounds).
TEST(AntiAliasedActivation, ErrorFigures) {
  double worst[5] = {0, 0, 0, 0, 0};
  uint64_t seed = 5000;
  for (int64_t C : {1, 24, 100, 512})
    for (int64_t T : {3, 9, 37, 200}) {
      const Made m = make_act(C, seed += 2);
      const Tensor x = test::random_normal({1, T, C}, ++seed, 2.f);
      const Tensor want = ref::to_tensor(reference(m, x));
      const Tensor fused = m.act.forward(x), unfused = test::activation_unfused(m.act, x);
      worst[0] = std::max(worst[0], test::compare(fused, want).rel_l2);
      worst[1] = std::max(worst[1], test::compare(unfused, want).rel_l2);
      worst[2] = std::max(worst[2], test::compare(fused, unfused).rel_l2);
      worst[3] = std::max(worst[3], test::compare(test::activation_scalar(m.act, x), want).rel_l2);
      worst[4] = std::max(worst[4], test::compare(fused, want).max_abs);
    }
  std::printf(
      "Activation1d rel L2 vs float64: fused %.3g (max abs %.3g), fused scalar %.3g, unfused %.3g; "
      "fused vs unfused %.3g\n",
      worst[0], worst[4], worst[3], worst[1], worst[2]);
  const auto g = test::load_fixture("audio_kernels.safetensors");
  for (const char* c : {"aa_sb_c24_t37", "aa_sb_c100_t9", "aa_sb_c1_t3", "aa_sb_c512_t20"}) {
    const std::string n = c;
    AntiAliasedActivation act(n, g.at(n + ".x").dim(2), SnakeKind::snake_beta, true);
    act.load_state_dict({{"a.act.alpha", g.at(n + ".alpha")}, {"a.act.beta", g.at(n + ".beta")}},
                        "a.");
    std::printf(
        "  torch golden %-16s fused rel L2 %.3g, unfused %.3g\n", c,
        test::compare(act.forward(g.at(n + ".x")), g.at(n + ".out")).rel_l2,
        test::compare(test::activation_unfused(act, g.at(n + ".x")), g.at(n + ".out")).rel_l2);
  }
  EXPECT_LE(worst[2], 1e-6);
}

}  // namespace
}  // namespace meshnn::layers
