// The GR00T descriptions against the checkpoints tools/make_gr00t_checkpoint.py writes (the golden
// fixtures), and the checks and counts derived from the table.
#include <gtest/gtest.h>

#include <set>

#include "meshnn/core/error.h"
#include "meshnn/io/safetensors.h"
#include "models/gr00t/action_head.h"
#include "models/gr00t/description.h"
#include "support/fixtures.h"
#include "support/gr00t_policy_desc.h"

namespace meshnn::gr00t {
namespace {

const char* tag(Version v) {
  return v == Version::n1_5 ? "n1_5" : v == Version::n1_6 ? "n1_6" : "n1_7";
}

// The fixture's tensors under the prefix (the rest are the goldens' inputs and outputs), with
// their shapes.
std::map<std::string, Shape> checkpoint_tensors(const io::SafetensorsFile& f) {
  std::map<std::string, Shape> out;
  for (const std::string& k : f.keys())
    if (k.rfind(default_weight_prefix(), 0) == 0) out[k] = f.shape(k);
  return out;
}

void expect_equal(const std::map<std::string, Shape>& have, const ModelDesc& desc,
                  const std::string& what) {
  std::map<std::string, Shape> want;
  for (const auto& [k, s] : tensor_shapes(desc)) want[k] = s;
  for (const auto& [k, s] : want) {
    auto it = have.find(k);
    EXPECT_TRUE(it != have.end()) << what << ": missing '" << k << "' " << shape_str(s);
    if (it != have.end()) {
      EXPECT_EQ(it->second, s) << what << ": '" << k << "'";
    }
  }
  for (const auto& [k, s] : have)
    EXPECT_TRUE(want.count(k)) << what << ": unexpected '" << k << "'";
}

class Gr00tDescription : public ::testing::TestWithParam<Version> {};

// gen_gr00t.py writes the adapter's tensors only: exactly the adapter table.
TEST_P(Gr00tDescription, PythonWrittenAdapterKeysEqualTheTable) {
  const Version v = GetParam();
  const io::SafetensorsFile f =
      test::open_fixture(std::string("gr00t_adapter_") + tag(v) + ".safetensors");
  const Config cfg = Config::from_metadata(f.metadata(), v);
  expect_equal(checkpoint_tensors(f), describe_adapter(cfg, default_weight_prefix()),
               std::string("adapter ") + tag(v));
}

// gen_gr00t_action_head.py writes the whole head: the adapter's and the head's tables together.
TEST_P(Gr00tDescription, PythonWrittenHeadKeysEqualTheTable) {
  const Version v = GetParam();
  const io::SafetensorsFile f =
      test::open_fixture(std::string("gr00t_head_") + tag(v) + ".safetensors");
  const Config cfg = Config::from_metadata(f.metadata(), v);
  const ActionHeadConfig hc = ActionHeadConfig::from_metadata(f.metadata(), v);
  expect_equal(checkpoint_tensors(f), test::describe_gr00t_policy(cfg, hc, default_weight_prefix()),
               std::string("head ") + tag(v));
  // The C++ random writer covers the same keys and shapes.
  std::map<std::string, Shape> random;
  for (const auto& [k, t] : make_random_head_checkpoint(cfg, hc, 5)) random[k] = t.shape();
  expect_equal(random, test::describe_gr00t_policy(cfg, hc, default_weight_prefix()),
               std::string("random head ") + tag(v));
}

INSTANTIATE_TEST_SUITE_P(Gr00t, Gr00tDescription,
                         ::testing::Values(Version::n1_5, Version::n1_6, Version::n1_7),
                         [](const ::testing::TestParamInfo<Version>& i) { return tag(i.param); });

TEST(Gr00tDescription, CheckReportsEveryProblemAtOnce) {
  const Config cfg = Config::defaults(Version::n1_5);
  const ActionHeadConfig hc = ActionHeadConfig::defaults(Version::n1_5);
  const std::string pre = default_weight_prefix();
  const ModelDesc desc = test::describe_gr00t_policy(cfg, hc, pre);
  std::map<std::string, Shape> t;
  for (const auto& [k, s] : tensor_shapes(desc)) t[k] = s;
  const ActionHeadWeights hw = action_head_weights(cfg, hc, pre);
  const std::string q = hw.blocks[3].q.weight_key();
  const std::string b = hw.decoder_layer2.bias_key();
  const std::string pos = hw.position_embedding.weight_key();
  t.erase(q);
  t.erase(b);
  t[pos] = {3, 3};
  t["backbone.anything"] = {2};  // outside the prefix: another model's, never read
  // The loaders' check lists them all in one error.
  std::map<std::string, Tensor> w;
  for (const auto& [k, s] : t) w[k] = Tensor::empty(s);
  try {
    require_weights(desc, lookup_in(w), "n1.5 policy");
    FAIL() << "expected a WeightError";
  } catch (const WeightError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("3 checkpoint tensor problem(s)"), std::string::npos) << m;
    EXPECT_NE(m.find(q), std::string::npos) << m;
    EXPECT_NE(m.find(b), std::string::npos) << m;
    EXPECT_NE(m.find(pos + "' has shape (3, 3)"), std::string::npos) << m;
  }
}

// Multiply-adds from the table: the adapter's hoist and VL-SA, and one DiT evaluation.
TEST(Gr00tDescription, FlopsFromTheTable) {
  Config cfg = Config::defaults(Version::n1_5);
  const ModelDesc ad = describe_adapter(cfg, default_weight_prefix());
  const AdapterWeights aw = adapter_weights(cfg, default_weight_prefix());
  // 64 VL rows through every layer: each VL-SA block is 4·D² + 2·D·F, each cross K/V 2 ·
  // inner · D, the state encoder one row per layer.
  const double f = flops(ad, [&](const LayerDesc& l) {
    return l.key == aw.state_layer1.key || l.key == aw.state_layer2.key ? 1 : 64;
  });
  const double D = 2048, F = 8192, inner = 32 * 48;
  const double want = 2.0 * 64 * (4 * (4 * D * D + 2 * D * F) + 8 * 2 * inner * D) +
                      2.0 * (64 * 1024 + 1024 * 1536);
  EXPECT_DOUBLE_EQ(f, want);
}

}  // namespace
}  // namespace meshnn::gr00t
