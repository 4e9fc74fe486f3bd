// meshnn::PolicyModel (meshnn/policy_model.h), the generic client of the policy registry: the
// catalog describes every registered model; identify() finds the GR00T head fixtures and refuses an
// audio checkpoint with each model's reason; load() + run() of each part equals the typed GR00T
// classes (gr00t::Policy / gr00t::Adapter) bit for bit; validate() gives the adapter's plan with
// nothing packed; unknown settings, inputs and parts are refused naming what there is.
#include "meshnn/policy_model.h"

#include <gtest/gtest.h>

#include "meshnn/core/error.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/safetensors.h"
#include "support/expect_error.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

struct Head {
  std::string path = fixture_path("gr00t_head_n1_7.safetensors");
  io::SafetensorsFile f = open_fixture("gr00t_head_n1_7.safetensors");
  int embodiment = std::stoi(f.metadata().at("embodiment"));
  Tensor in(const std::string& k) const { return f.get("input." + k); }
  PolicyModelOptions options(const std::string& part) const {
    PolicyModelOptions o;
    o.variant = "n1.7";
    o.part = part;
    o.threads = 1;
    o.inputs["token_types"] = in("token_types");
    return o;
  }
  PolicyStep step(bool noise) const {
    PolicyStep s;
    s.inputs = {{"features", in("features")}, {"state", in("state")}};
    if (noise) s.inputs["noise"] = in("noise");
    s.embodiment = embodiment;
    s.seed = 11;
    return s;
  }
};

TEST(PolicyModel, CatalogAndIdentify) {
  const std::vector<PolicyModelEntry> catalog = PolicyModel::catalog();
  ASSERT_EQ(catalog.size(), PolicyModel::registered().size());
  for (const PolicyModelEntry& e : catalog) {
    EXPECT_FALSE(e.path.empty()) << e.name;
    ASSERT_FALSE(e.parts.empty()) << e.name;
    EXPECT_EQ(e.parts.front().name, "policy") << e.name;
  }
  const Head h;
  EXPECT_EQ(PolicyModel::identify(h.path), "gr00t");
  expect_error<InvalidArgument>(
      [] { PolicyModel::identify(fixture_path("ltx23_small.safetensors")); },
      {"not a policy model", "gr00t:"});
  EXPECT_EQ(PolicyModel::files(h.path), std::vector<std::string>{h.path});
}

TEST(PolicyModel, PartsEqualTheTypedClassesBitForBit) {
  using namespace gr00t;
  const Head h;
  const Tensor types = h.in("token_types");
  gr00t::LoadOptions lo;
  lo.threads = 1;
  const Policy typed = Policy::load(h.path, Version::n1_7, types, {}, lo);
  const PolicyModel m = PolicyModel::load(h.path, h.options("policy"));
  EXPECT_EQ(m.model(), "gr00t");
  EXPECT_EQ(m.variant(), "n1.7");
  EXPECT_EQ(m.describe(), typed.describe());
  EXPECT_EQ(m.default_steps(), typed.head_config().num_steps);
  for (bool noise : {true, false}) {
    const auto out = m.run(h.step(noise));
    ASSERT_EQ(out.size(), 1u);
    const Tensor want = typed.get_action(h.in("features"), Tensor(), h.in("state"), h.embodiment,
                                         noise ? h.in("noise") : Tensor(), 11);
    EXPECT_TRUE(bit_equal(out.at("actions"), want, noise ? "given noise" : "seeded"));
  }
  const Adapter adapter = Adapter::load(h.path, Version::n1_7, types, {}, lo);
  const PolicyModel a = PolicyModel::load(h.path, h.options("adapter"));
  EXPECT_EQ(a.part(), "adapter");
  EXPECT_EQ(a.metadata().at("plan"), adapter.plan().describe());
  EXPECT_EQ(PolicyModel::validate(h.path, h.options("adapter")), adapter.plan().describe());
  PolicyStep s = h.step(false);
  const auto got = a.run(s);
  const auto want =
      adapter.named_tensors(adapter.run(h.in("features"), Tensor(), h.in("state"), h.embodiment));
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [k, t] : want) EXPECT_TRUE(bit_equal(got.at(k), t, k));
}

TEST(PolicyModel, RefusesWhatTheModelDoesNotTake) {
  const Head h;
  PolicyModelOptions o = h.options("policy");
  o.settings["temperature"] = "1";
  expect_error<InvalidArgument>([&] { PolicyModel::load(h.path, o); },
                                {"temperature", "precision"});
  o = h.options("planner");
  expect_error<InvalidArgument>([&] { PolicyModel::load(h.path, o); }, {"planner", "adapter"});
  o = h.options("policy");
  o.settings["taps"] = "1";
  expect_error<InvalidArgument>([&] { PolicyModel::load(h.path, o); }, {"taps", "adapter"});
  o = h.options("policy");
  o.inputs.clear();
  expect_error<InvalidArgument>([&] { PolicyModel::load(h.path, o); }, {"token_types"});
  o = h.options("policy");
  o.model = "no-such-model";
  expect_error<InvalidArgument>([&] { PolicyModel::load(h.path, o); }, {"no-such-model", "gr00t"});
  const PolicyModel adapter = PolicyModel::load(h.path, h.options("adapter"));
  PolicyStep denoise = h.step(false);
  denoise.steps = 2;
  expect_error<InvalidArgument>([&] { adapter.run(denoise); }, {"adapter", "steps"});
  const PolicyModel m = PolicyModel::load(h.path, h.options("policy"));
  PolicyStep s = h.step(true);
  s.inputs["image"] = h.in("features");
  expect_error<InvalidArgument>([&] { m.run(s); }, {"image", "features"});
}

}  // namespace
}  // namespace meshnn::test
