// Each streaming operator against its layer's one-shot forward, over random cut points: the
// concatenated pushes and flush equal the one-shot rows (bit for bit where the kernel computes a
// row the same wherever it sits in the call).
#include "graph/graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "meshnn/ops/filter_design.h"
#include "support/activation_ref.h"
#include "support/stream_test_util.h"

namespace meshnn::graph {
namespace {

using test::max_abs_diff;
using test::push_cut;
using test::random_cuts;
using test::random_rows;

// Convolutions: a row computed in a window need not round like the same row of the one-shot call
// (Winograd tiles start at the window, the direct kernel's edge rows take a scalar path, oneDNN
// blocks by shape), so they agree to f32 rounding relative to the output's scale.
constexpr double kConvTol = 4e-6;

double max_abs(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(double(t.data<float>()[i])));
  return m;
}

// Every cut pattern the op tests use on a T-row input: none, random, every row.
std::vector<std::vector<int64_t>> cut_patterns(int64_t T, uint64_t seed) {
  std::vector<int64_t> ones;
  for (int64_t r = 1; r < T; ++r) ones.push_back(r);
  return {{}, random_cuts(T, 3, seed), random_cuts(T, 9, seed + 1), ones};
}

struct ConvCase {
  int64_t c_in, c_out, k, dilation, stride;
  const char* mode;  // "zeros" | "causal"
};

void PrintTo(const ConvCase& c, std::ostream* os) {
  *os << c.c_in << "->" << c.c_out << " k" << c.k << " d" << c.dilation << " s" << c.stride << " "
      << c.mode;
}

class ConvStreamTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvStreamTest, EqualsOneShot) {
  const ConvCase c = GetParam();
  Conv1dConfig cfg;
  cfg.in_channels = c.c_in;
  cfg.out_channels = c.c_out;
  cfg.kernel_size = c.k;
  cfg.dilation = c.dilation;
  cfg.stride = c.stride;
  cfg.padding_mode = c.mode;
  Conv1d conv(cfg, "conv");
  conv.set_weights(random_rows({c.c_out, c.c_in, c.k}, 11, -0.3f, 0.3f),
                   random_rows({c.c_out}, 12, -0.1f, 0.1f));
  for (int64_t T : {1, 2, 5, 37, 64}) {
    if (c.stride > 1 && T % c.stride) continue;
    const Tensor x = random_rows({2, T, c.c_in}, 100 + T);
    Tensor ref;
    try {
      ref = conv.forward(x);
    } catch (const ShapeError&) {
      continue;  // too short for this kernel in one shot as well
    }
    auto op = conv_node(conv);
    for (const auto& cuts : cut_patterns(T, T)) {
      const Tensor y = push_cut(*op, x, cuts);
      EXPECT_LE(max_abs_diff(y, ref), kConvTol * max_abs(ref))
          << "T=" << T << " cuts=" << cuts.size();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvStreamTest,
    ::testing::Values(ConvCase{16, 24, 7, 1, 1, "zeros"}, ConvCase{32, 32, 3, 5, 1, "zeros"},
                      ConvCase{32, 32, 11, 3, 1, "zeros"}, ConvCase{8, 16, 3, 1, 1, "causal"},
                      ConvCase{1, 18, 16, 1, 4, "causal"}, ConvCase{128, 128, 7, 3, 1, "zeros"},
                      ConvCase{96, 96, 11, 5, 1, "zeros"}));

TEST(ConvTransposeStream, EqualsOneShot) {
  for (auto [s, k] : std::vector<std::pair<int64_t, int64_t>>{{2, 4}, {4, 8}, {5, 11}, {8, 16}}) {
    ConvTranspose1dConfig cfg;
    cfg.in_channels = 24;
    cfg.out_channels = 16;
    cfg.kernel_size = k;
    cfg.stride = s;
    if ((k - s) % 2) cfg.padding = (k - s + 1) / 2;  // as the configs with odd k − s do
    ConvTranspose1d conv(cfg, "ups");
    conv.set_weights(random_rows({24, 16, k}, 21, -0.3f, 0.3f), random_rows({16}, 22, -0.1f, 0.1f));
    for (int64_t T : {1, 3, 29}) {
      const Tensor x = random_rows({1, T, 24}, 200 + T);
      const Tensor ref = conv.forward(x);
      auto op = conv_transpose_node(conv);
      for (const auto& cuts : cut_patterns(T, T)) {
        const Tensor y = push_cut(*op, x, cuts);
        EXPECT_LE(max_abs_diff(y, ref), kConvTol * max_abs(ref))
            << "s=" << s << " k=" << k << " T=" << T;
      }
    }
  }
}

TEST(ActivationStream, BitIdenticalToOneShot) {
  for (auto kind : {layers::SnakeKind::snake_beta, layers::SnakeKind::snake}) {
    layers::AntiAliasedActivation act("act", 20, kind, true);
    const Tensor a = random_rows({20}, 31, -0.5f, 0.5f), b = random_rows({20}, 32, -0.5f, 0.5f);
    act.set_parameters(a, &b);
    for (int64_t T : {1, 4, 11, 50}) {
      const Tensor x = random_rows({2, T, 20}, 300 + T);
      const Tensor ref = act.forward(x);
      auto op = activation_node(act);
      for (const auto& cuts : cut_patterns(T, T)) {
        const Tensor y = push_cut(*op, x, cuts);
        EXPECT_EQ(max_abs_diff(y, ref), 0.0)
            << "kind " << int(kind) << " T=" << T << " cuts=" << cuts.size();
      }
    }
  }
}

TEST(UpsampleStream, EqualsOneShot) {
  for (int ratio : {2, 3}) {
    const std::vector<float> taps =
        ratio == 3 ? ops::hann_sinc_filter1d(3) : ops::kaiser_sinc_filter1d(0.25f, 0.3f, 12);
    const ops::UpsampleGeometry g =
        ratio == 3 ? ops::hann_upsample_geometry(3) : test::kaiser_upsample_geometry(2, 12);
    for (int64_t T : {1, 6, 40}) {
      const Tensor x = random_rows({1, T, 2}, 400 + T);
      const Tensor ref = ops::upsample1d(x, taps, g);
      auto op = upsample_node(taps, g);
      for (const auto& cuts : cut_patterns(T, T)) {
        const Tensor y = push_cut(*op, x, cuts);
        EXPECT_EQ(max_abs_diff(y, ref), 0.0) << "ratio=" << ratio << " T=" << T;
      }
    }
  }
}

TEST(Graph, HistoryStaysBounded) {
  Conv1dConfig cfg;
  cfg.in_channels = cfg.out_channels = 8;
  cfg.kernel_size = 11;
  cfg.dilation = 5;
  Conv1d conv(cfg, "conv");
  conv.set_weights(random_rows({8, 8, 11}, 1), random_rows({8}, 2));
  auto op = conv_node(conv);
  for (int i = 0; i < 200; ++i) {
    op->push(random_rows({1, 7, 8}, 500 + i));
    EXPECT_LE(op->held_rows(), 10 * 5 + 7);
  }
}

}  // namespace
}  // namespace meshnn::graph
