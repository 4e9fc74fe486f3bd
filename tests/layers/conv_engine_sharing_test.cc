// An engine's forks share its weight store (converted and packed once per process, not once per
// mesh device) and own their plans: forks run concurrently on different threads with outputs equal
// to the parent's, and the plan cache stays bounded however many input lengths a process sees.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "layers/conv_engine.h"
#include "support/golden.h"

namespace meshnn::conv {
namespace {

ConvSpec spec_1d(int64_t c, int64_t k, int64_t d) {
  ConvSpec s;
  s.c_in = c;
  s.c_out = c;
  s.kernel = {k, 1};
  s.dilation = {d, 1};
  return s;
}

void check_forks(const ConvSpec& spec, int64_t T) {
  const int64_t c = spec.c_in, k = spec.kernel[0];
  const Tensor w = test::random_normal({c, c, k}, 21, 0.1f);
  const Tensor b = test::random_normal({c}, 22);
  const ConvEngine parent(spec, w, b);
  std::unique_ptr<ConvEngine> e1 = parent.fork(), e2 = parent.fork();
  EXPECT_EQ(e1->weights_identity(), parent.weights_identity());
  EXPECT_EQ(e2->weights_identity(), parent.weights_identity());
  ConvEngine other(spec, w, b);  // built from equal bytes: its own store (no content matching)
  EXPECT_NE(other.weights_identity(), parent.weights_identity());

  ConvPads pads;
  pads.l[0] = pads.r[0] = (k - 1) * spec.dilation[0] / 2;
  const Tensor x1 = test::random_uniform({1, T, c}, 23),
               x2 = test::random_uniform({1, T + 7, c}, 24);
  Tensor y1({1, T, c}), y2({1, T + 7, c});
  // Both forks run (and pack lazily, first use of a layout) at the same time on different inputs.
  std::thread r1([&] { e1->run(x1, y1, pads, false); });
  std::thread r2([&] { e2->run(x2, y2, pads, false); });
  r1.join();
  r2.join();
  // Serial runs on a third engine give the same bytes.
  Tensor s1({1, T, c}), s2({1, T + 7, c});
  other.run(x1, s1, pads, false);
  other.run(x2, s2, pads, false);
  EXPECT_EQ(std::memcmp(y1.raw(), s1.raw(), sizeof(float) * y1.numel()), 0);
  EXPECT_EQ(std::memcmp(y2.raw(), s2.raw(), sizeof(float) * y2.numel()), 0);
}

TEST(ConvEngineSharing, DirectKernelPath) { check_forks(spec_1d(48, 7, 3), 300); }

TEST(ConvEngineSharing, OneDnnPath) { check_forks(spec_1d(256, 3, 1), 200); }

// A long-running process decoding many lengths keeps a bounded number of plans: results stay
// right when old plans are dropped and rebuilt.
TEST(ConvEngineSharing, PlanCacheBoundedOverManyLengths) {
  const ConvSpec spec = spec_1d(256, 3, 1);
  const Tensor w = test::random_normal({256, 256, 3}, 31, 0.1f);
  const Tensor b = test::random_normal({256}, 32);
  ConvEngine e(spec, w, b);
  ConvPads pads;
  pads.l[0] = pads.r[0] = 1;
  const Tensor x = test::random_uniform({1, 40, 256}, 33);
  Tensor first({1, 40, 256});
  e.run(x, first, pads, false);
  for (int64_t T = 41; T < 41 + 40; ++T) {
    Tensor xt = test::random_uniform({1, T, 256}, 34 + T), yt({1, T, 256});
    e.run(xt, yt, pads, false);
  }
  EXPECT_LE(e.plan_count(), size_t{16});
  Tensor again({1, 40, 256});
  e.run(x, again, pads, false);
  EXPECT_EQ(std::memcmp(first.raw(), again.raw(), sizeof(float) * first.numel()), 0);
}

}  // namespace
}  // namespace meshnn::conv
