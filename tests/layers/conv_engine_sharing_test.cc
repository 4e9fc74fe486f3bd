// Engines built from equal weights share one packed weight store (one per process, not one per
// mesh device); engines from different weights never do, and shared engines run concurrently.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>

#include "dnnl/conv_engine.h"
#include "support/golden.h"

namespace meshnn::dnnl_glue {
namespace {

ConvSpec spec_1d(int64_t c, int64_t k, int64_t d) {
  ConvSpec s;
  s.c_in = c;
  s.c_out = c;
  s.kernel = {k, 1};
  s.dilation = {d, 1};
  return s;
}

void check_sharing(const ConvSpec& spec, int64_t T) {
  const int64_t c = spec.c_in, k = spec.kernel[0];
  const Tensor w = test::random_normal({c, c, k}, 21, 0.1f);
  const Tensor b = test::random_normal({c}, 22);
  Tensor w_other = w.clone();
  w_other.data<float>()[w_other.numel() - 1] += 1.f;  // one value differs

  // Built on two threads, as the devices of a local mesh build their models.
  std::unique_ptr<ConvEngine> e1, e2;
  std::thread t1([&] { e1 = std::make_unique<ConvEngine>(spec, w, b); });
  std::thread t2([&] { e2 = std::make_unique<ConvEngine>(spec, w.clone(), b.clone()); });
  t1.join();
  t2.join();
  ConvEngine e3(spec, w_other, b);
  EXPECT_EQ(e1->weights_identity(), e2->weights_identity());
  EXPECT_NE(e1->weights_identity(), e3.weights_identity());

  const Tensor x = test::random_uniform({1, T, c}, 23);
  ConvPads pads;
  pads.l[0] = pads.r[0] = (k - 1) * spec.dilation[0] / 2;
  Tensor y1({1, T, c}), y2({1, T, c}), y3({1, T, c});
  // Both shared engines run (and pack lazily) at the same time.
  std::thread r1([&] { e1->run(x, y1, pads, false); });
  std::thread r2([&] { e2->run(x, y2, pads, false); });
  r1.join();
  r2.join();
  e3.run(x, y3, pads, false);
  EXPECT_EQ(std::memcmp(y1.raw(), y2.raw(), sizeof(float) * y1.numel()), 0);
  EXPECT_NE(std::memcmp(y1.raw(), y3.raw(), sizeof(float) * y1.numel()), 0);
}

TEST(ConvEngineSharing, DirectKernelPath) { check_sharing(spec_1d(48, 7, 3), 300); }

TEST(ConvEngineSharing, OneDnnPath) { check_sharing(spec_1d(256, 3, 1), 200); }

}  // namespace
}  // namespace meshnn::dnnl_glue
