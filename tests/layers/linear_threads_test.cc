// Linear and threads: a copy of a layer is a fork (the weights and their packed copies shared,
// plans and scratch its own), so copies run concurrently; and a GR00T policy copy per thread
// gives the serial outputs.
#include <gtest/gtest.h>

#include <thread>
#include <type_traits>

#include "layers/linear.h"
#include "meshnn/gr00t_config.h"
#include "meshnn/io/safetensors.h"
#include "models/gr00t/action_head.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using layers::Activation;
using layers::Linear;

static_assert(std::is_nothrow_move_constructible_v<Linear>, "vectors of layers move, not fork");

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.numel()) * sizeof(float)) == 0;
}

TEST(LinearThreads, CopiesShareWeightsAndRunConcurrently) {
  const int64_t K = 96, N = 160;
  const Tensor w = random_uniform({N, K}, 2, -0.3f, 0.3f), b = random_uniform({N}, 3);
  struct Case {
    Precision p;
    bool packed;
    Activation act;
  };
  for (const Case& c : {Case{Precision::fp32, false, Activation::gelu_tanh},
                        Case{Precision::fp32, true, Activation::none},
                        Case{Precision::bf16, false, Activation::relu}}) {
    SCOPED_TRACE(precision_name(c.p) + std::string(c.packed ? " packed" : ""));
    Linear a = Linear::from_out_in(w, b, c.act, c.p);
    if (c.packed) a.primitive().set_packed_f32(true);
    Linear copy = a;
    // Several row counts per thread, so both build plans while the other runs.
    std::vector<Tensor> xs;
    for (int64_t M : {49, 7, 130, 49}) xs.push_back(random_normal({M, K}, 10 + M));
    std::vector<Tensor> want;
    {
      Linear serial = Linear::from_out_in(w, b, c.act, c.p);
      if (c.packed) serial.primitive().set_packed_f32(true);
      for (const Tensor& x : xs) want.push_back(serial.forward(x));
    }
    std::vector<Tensor> got_a(xs.size()), got_b(xs.size());
    for (int round = 0; round < 3; ++round) {
      std::thread ta([&] {
        for (size_t i = 0; i < xs.size(); ++i) got_a[i] = a.forward(xs[i]);
      });
      std::thread tb([&] {
        for (size_t i = xs.size(); i-- > 0;) got_b[i] = copy.forward(xs[i]);
      });
      ta.join();
      tb.join();
      for (size_t i = 0; i < xs.size(); ++i) {
        EXPECT_TRUE(bit_equal(got_a[i], want[i])) << i;
        EXPECT_TRUE(bit_equal(got_b[i], want[i])) << i;
      }
    }
  }
}

// One GR00T policy loaded once and forked: each of two threads runs its own runner (the VL
// adapter and the action head, every Linear of GR00T: weights shared, plans and scratch per
// runner) on a different observation at the same time, and gets its serial result bit for bit.
TEST(LinearThreads, Gr00tPolicyPerThreadEqualsSerial) {
  using namespace gr00t;
  const Version v = Version::n1_5;
  const std::map<std::string, Tensor> t = load_fixture("gr00t_head_n1_5.safetensors");
  const io::SafetensorsFile f = open_fixture("gr00t_head_n1_5.safetensors");
  const Config cfg = Config::from_metadata(f.metadata(), v);
  const ActionHeadConfig hc = ActionHeadConfig::from_metadata(f.metadata(), v);
  const SlotLayout layout = SlotLayout::from_token_types(t.at("input.token_types"), cfg.row_block);
  const Tensor& features = t.at("input.features");
  const Tensor& state = t.at("input.state");
  for (Precision p : {Precision::fp32, Precision::bf16}) {
    SCOPED_TRACE(precision_name(p));
    PolicyOptions opt;
    opt.adapter.precision = p;
    opt.head.precision = p;
    const PolicyRunner loaded(cfg, hc, layout, lookup_in(t), opt);
    std::vector<Tensor> noise = {random_normal({1, hc.action_horizon, hc.action_dim}, 1),
                                 random_normal({1, hc.action_horizon, hc.action_dim}, 2)};
    std::vector<Tensor> want;
    for (int i = 0; i < 2; ++i) {
      PolicyRunner serial(cfg, hc, layout, lookup_in(t), opt);  // a separately built model
      want.push_back(serial.get_action(features, state, 1 + i, noise[i]));
    }
    std::vector<std::unique_ptr<PolicyRunner>> runners;
    for (int i = 0; i < 2; ++i) runners.push_back(loaded.fork());
    std::vector<Tensor> got(2);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([&, i] {
        for (int k = 0; k < 3; ++k)
          got[i] = runners[i]->get_action(features, state, 1 + i, noise[i]);
      });
    for (std::thread& th : threads) th.join();
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(bit_equal(got[i], want[i])) << i;
    // Each runner counted its own work; their K/V buffers are their own.
    EXPECT_EQ(runners[0]->adapter().hoist_projections(), runners[1]->adapter().hoist_projections());
    EXPECT_NE(runners[0]->adapter().plan().s_pad, 0);
  }
}

}  // namespace
}  // namespace meshnn::test
