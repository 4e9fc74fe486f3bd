// The public GR00T API (meshnn/gr00t.h): Policy::load + get_action and Adapter::load + run equal
// the building blocks (PolicyRunner / VlAdapter built by hand) bit for bit on the fixtures; a
// head-parallel 1x2 / 2x1 mesh equals 1x1 within the head-parallel tests' bound, call after call
// (the runners move to each launch's devices); concurrent calls equal serial ones; bad configs,
// meshes and checkpoints are refused at load, before any weight is packed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "meshnn/core/error.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/safetensors.h"
#include "models/gr00t/action_head.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using namespace meshnn::gr00t;

const char* tag(Version v) {
  return v == Version::n1_5 ? "n1_5" : v == Version::n1_6 ? "n1_6" : "n1_7";
}

// A fixture's tensors, metadata, configs and inputs, for the hand-built reference.
struct Fixture {
  std::string path;
  std::map<std::string, Tensor> t;
  std::map<std::string, std::string> metadata;
  Config cfg;
  SlotLayout layout;
  int embodiment = 0;

  Fixture(const std::string& kind, Version v) {
    const std::string name = kind + tag(v) + ".safetensors";
    path = fixture_path(name);
    const io::SafetensorsFile f = open_fixture(name);
    for (const std::string& k : f.keys()) t.emplace(k, f.get(k));
    metadata = f.metadata();
    cfg = Config::from_metadata(metadata, v);
    layout = SlotLayout::from_token_types(t.at("input.token_types"), cfg.row_block);
    embodiment = std::stoi(metadata.at("embodiment"));
  }
  const Tensor& in(const std::string& k) const { return t.at("input." + k); }
};

LoadOptions on_mesh(const std::string& mesh) {
  LoadOptions lo;
  lo.mesh = mesh;
  lo.threads = 1;
  return lo;
}

class Gr00tApi : public ::testing::TestWithParam<Version> {};

TEST_P(Gr00tApi, PolicyLoadEqualsTheBuildingBlocksBitForBit) {
  const Version v = GetParam();
  const Fixture fx("gr00t_head_", v);
  const ActionHeadConfig hc = ActionHeadConfig::from_metadata(fx.metadata, v);
  PolicyRunner manual(fx.cfg, hc, fx.layout, lookup_in(fx.t));
  std::vector<Tensor> want_v;
  const Tensor want = manual.get_action(fx.in("features"), fx.in("state"), fx.embodiment,
                                        fx.in("noise"), 0, 0, &want_v);
  const Tensor want_seeded =
      manual.get_action(fx.in("features"), fx.in("state"), fx.embodiment, Tensor(), 7);

  const Policy pol = Policy::load(fx.path, v, fx.in("token_types"));
  EXPECT_EQ(pol.head_config().action_horizon, hc.action_horizon);
  std::vector<Tensor> got_v;
  const Tensor got = pol.get_action(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment,
                                    fx.in("noise"), 0, 0, &got_v);
  EXPECT_TRUE(bit_equal(got, want));
  ASSERT_EQ(got_v.size(), want_v.size());
  for (size_t i = 0; i < got_v.size(); ++i) EXPECT_TRUE(bit_equal(got_v[i], want_v[i])) << i;
  EXPECT_TRUE(close_rel_l2(got, fx.t.at("golden.actions"), 1e-5, "golden actions"));
  // Seeded noise, and the layout's mask passed explicitly, give the same as the defaults.
  EXPECT_TRUE(bit_equal(
      pol.get_action(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment, Tensor(), 7),
      want_seeded));
  const Tensor mask = pol.plan().vl_mask_present ? fx.layout.key_valid_mask() : Tensor();
  EXPECT_TRUE(bit_equal(
      pol.get_action(fx.in("features"), mask, fx.in("state"), fx.embodiment, fx.in("noise")),
      want));
  // The in-memory checkpoint gives the same policy.
  const Policy mem = Policy::load(Checkpoint{fx.t, fx.metadata}, v, fx.in("token_types"));
  EXPECT_TRUE(bit_equal(
      mem.get_action(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment, fx.in("noise")),
      want));
}

TEST_P(Gr00tApi, AdapterLoadEqualsTheBuildingBlockBitForBit) {
  const Version v = GetParam();
  const Fixture fx("gr00t_adapter_", v);
  AdapterOptions opt;
  opt.collect_taps = true;
  VlAdapter manual(fx.cfg, fx.layout, lookup_in(fx.t), opt);
  const Tensor x = fx.layout.rows_to_slots(fx.in("features"));
  const Tensor mask = manual.plan().vl_mask_present ? fx.layout.key_valid_mask() : Tensor();
  const AdapterOutputs want = manual.forward(x, mask, fx.in("state"), fx.embodiment);

  const Adapter ad = Adapter::load(fx.path, v, fx.in("token_types"), opt);
  EXPECT_EQ(ad.plan().describe(), manual.plan().describe());
  const AdapterOutputs got = ad.run(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment);
  EXPECT_TRUE(bit_equal(got.vl, want.vl));
  ASSERT_EQ(got.kv.size(), want.kv.size());
  for (const auto& [b, kv] : want.kv) {
    EXPECT_TRUE(bit_equal(got.kv.at(b).first, kv.first)) << b;
    EXPECT_TRUE(bit_equal(got.kv.at(b).second, kv.second)) << b;
  }
  EXPECT_TRUE(bit_equal(got.state_features, want.state_features));
  for (const auto& [name, tap] : want.taps) EXPECT_TRUE(bit_equal(got.taps.at(name), tap)) << name;
  // The K/V handed out are copies: a second call does not overwrite the first call's.
  const Tensor k0 = got.kv.begin()->second.first.clone();
  const AdapterOutputs again =
      ad.run(random_normal(fx.in("features").shape(), 3), Tensor(), fx.in("state"), 0);
  EXPECT_TRUE(bit_equal(got.kv.begin()->second.first, k0));
  EXPECT_FALSE(bit_equal(again.kv.begin()->second.first, k0));
  // The command line's names.
  const std::map<std::string, Tensor> named = ad.named_tensors(got);
  EXPECT_TRUE(named.count("dit_encoder_hidden_states") && named.count("state_features"));
  EXPECT_EQ(named.at("dit_encoder_hidden_states").shape(), fx.in("features").shape());
}

// A one-thread call gives the same bits whatever ran before it on its thread: here a two-thread
// adapter of the same shapes first. Its cached matmul plans were once reused under one thread,
// whose work split then differed on AVX2 (1 ulp off a fresh thread); the plan key now holds the
// thread budget. The fresh call runs on a new thread: the plan caches are per thread.
TEST_P(Gr00tApi, OneThreadCallIsTheSameAfterATwoThreadOne) {
  const Version v = GetParam();
  const Fixture head("gr00t_head_", v), adapter("gr00t_adapter_", v);
  auto act = [&] {
    const Policy pol = Policy::load(head.path, v, head.in("token_types"), {}, on_mesh("1x1"));
    return pol.get_action(head.in("features"), Tensor(), head.in("state"), head.embodiment,
                          head.in("noise"));
  };
  LoadOptions two = on_mesh("1x1");
  two.threads = 2;
  const Adapter ad = Adapter::load(adapter.path, v, adapter.in("token_types"), {}, two);
  (void)ad.run(adapter.in("features"), Tensor(), adapter.in("state"), adapter.embodiment);
  const Tensor after = act();
  Tensor fresh;
  std::thread([&] { fresh = act(); }).join();
  EXPECT_TRUE(bit_equal(after, fresh));
}

INSTANTIATE_TEST_SUITE_P(Gr00t, Gr00tApi,
                         ::testing::Values(Version::n1_5, Version::n1_6, Version::n1_7),
                         [](const ::testing::TestParamInfo<Version>& i) { return tag(i.param); });

// N1.6 (no VL-SA; 2 DiT heads) splits over two devices; the N1.5 / N1.7 fixtures' 3 VL-SA heads
// do not (refused at load, see below).
TEST(Gr00tApiMesh, HeadParallelEqualsOneDeviceCallAfterCall) {
  const Version v = Version::n1_6;
  const Fixture fx("gr00t_head_", v);
  const Policy one = Policy::load(fx.path, v, fx.in("token_types"), {}, on_mesh("1x1"));
  const Tensor want =
      one.get_action(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment, fx.in("noise"));
  for (const char* mesh : {"1x2", "2x1"}) {
    SCOPED_TRACE(mesh);
    const Policy pol = Policy::load(fx.path, v, fx.in("token_types"), {}, on_mesh(mesh));
    EXPECT_EQ(pol.mesh().rows * pol.mesh().cols, 2);
    const Tensor a =
        pol.get_action(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment, fx.in("noise"));
    EXPECT_TRUE(close_rel_l2(a, want, 1e-6, "actions"));
    // A second launch: each device leases its slice's runner again and binds it to the new
    // devices; the replicated result is the same.
    const Tensor b =
        pol.get_action(fx.in("features"), Tensor(), fx.in("state"), fx.embodiment, fx.in("noise"));
    EXPECT_TRUE(bit_equal(a, b));
  }
  const Fixture fa("gr00t_adapter_", v);
  const Adapter a1 = Adapter::load(fa.path, v, fa.in("token_types"), {}, on_mesh("1x1"));
  const Adapter a2 = Adapter::load(fa.path, v, fa.in("token_types"), {}, on_mesh("1x2"));
  const AdapterOutputs w = a1.run(fa.in("features"), Tensor(), fa.in("state"), fa.embodiment);
  for (int call = 0; call < 2; ++call) {
    const AdapterOutputs g = a2.run(fa.in("features"), Tensor(), fa.in("state"), fa.embodiment);
    for (const auto& [b, kv] : w.kv) {
      EXPECT_EQ(g.kv.at(b).first.shape(), kv.first.shape());  // every head, gathered
      EXPECT_TRUE(close_rel_l2(g.kv.at(b).first, kv.first, 1e-6, "K" + std::to_string(b)));
      EXPECT_TRUE(close_rel_l2(g.kv.at(b).second, kv.second, 1e-6, "V" + std::to_string(b)));
    }
    EXPECT_TRUE(close_rel_l2(g.state_features, w.state_features, 1e-6, "state features"));
  }
}

// Two threads call one policy at once (each leases its own runners): the serial results, bit for
// bit, on one device and on a 1x2 mesh.
TEST(Gr00tApiThreads, ConcurrentCallsEqualSerial) {
  const Version v = Version::n1_6;
  const Fixture fx("gr00t_head_", v);
  for (const char* mesh : {"1x1", "1x2"}) {
    SCOPED_TRACE(mesh);
    const Policy pol = Policy::load(fx.path, v, fx.in("token_types"), {}, on_mesh(mesh));
    const Tensor f2 = random_normal(fx.in("features").shape(), 11);
    const std::vector<Tensor> feats = {fx.in("features"), f2};
    std::vector<Tensor> want;
    for (int i = 0; i < 2; ++i)
      want.push_back(pol.get_action(feats[i], Tensor(), fx.in("state"), i + 1, Tensor(), 5 + i));
    std::vector<Tensor> got(2);
    std::vector<std::thread> th;
    for (int i = 0; i < 2; ++i)
      th.emplace_back([&, i] {
        for (int k = 0; k < 3; ++k)
          got[i] = pol.get_action(feats[i], Tensor(), fx.in("state"), i + 1, Tensor(), 5 + i);
      });
    for (std::thread& t : th) t.join();
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(bit_equal(got[i], want[i])) << i;
    EXPECT_FALSE(bit_equal(want[0], want[1]));
  }
}

// ---- refused at load ---------------------------------------------------------------------------

template <class E, class F>
void expect_error(const F& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error naming '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Gr00tApiErrors, BadConfigsAndMeshesAreRefusedAtLoad) {
  const Version v = Version::n1_7;
  const Fixture fx("gr00t_head_", v);
  const Tensor& types = fx.in("token_types");
  // Strict config: a fractional horizon is refused (not run as 16), before any weight is read:
  // a checkpoint with no tensors at all still fails on the config, not on its keys.
  Checkpoint bad{{}, fx.metadata};
  std::string cfg = fx.metadata.at("config");
  const size_t at = cfg.find("\"action_horizon\": 4");
  ASSERT_NE(at, std::string::npos) << cfg;
  cfg.replace(at, 19, "\"action_horizon\": 4.5");
  bad.metadata["config"] = cfg;
  expect_error<InvalidArgument>([&] { Policy::load(bad, v, types); }, "action_horizon");
  LoadOptions lo;
  lo.config_json = R"({"diffusion_model_cfg": {"num_layers": "8"}})";
  expect_error<InvalidArgument>([&] { Policy::load(fx.path, v, types, {}, lo); }, "num_layers");
  // The same config from a file is the metadata's; text and file together are refused.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "meshnn_gr00t_api_test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "config.json").string();
  std::ofstream(good) << fx.metadata.at("config");
  LoadOptions from_file;
  from_file.config_path = good;
  const Policy pf = Policy::load(fx.path, v, types, {}, from_file);
  EXPECT_TRUE(
      close_rel_l2(pf.get_action(fx.in("features"), Tensor(), fx.in("state"), 2, fx.in("noise")),
                   fx.t.at("golden.actions"), 1e-5, "config file"));
  from_file.config_json = fx.metadata.at("config");
  expect_error<InvalidArgument>([&] { Policy::load(fx.path, v, types, {}, from_file); },
                                "not both");
  std::filesystem::remove_all(dir);
  // The metadata names another version.
  expect_error<InvalidArgument>([&] { Policy::load(fx.path, Version::n1_6, types); }, "n1.7");
  // Meshes: two axes, heads that do not split (3 VL-SA heads over 2), a bad thread count.
  expect_error<InvalidArgument>([&] { Policy::load(fx.path, v, types, {}, on_mesh("2x2")); },
                                "one mesh axis");
  expect_error<InvalidArgument>([&] { Adapter::load(fx.path, v, types, {}, on_mesh("1x2")); },
                                "divisible by 2");
  LoadOptions threads;
  threads.threads = -1;
  expect_error<InvalidArgument>([&] { Policy::load(fx.path, v, types, {}, threads); }, "threads");
  // Every missing key in one error.
  Checkpoint missing{fx.t, fx.metadata};
  missing.tensors.erase("action_head.model.transformer_blocks.3.attn1.to_q.weight");
  missing.tensors.erase("action_head.action_decoder.layer2.b");
  expect_error<WeightError>([&] { Policy::load(missing, v, types); }, "2 checkpoint tensor");
  // A layout without image tokens: the image cross blocks would attend nothing.
  Tensor text_only({types.numel()}, DType::i64);
  for (int64_t i = 0; i < types.numel(); ++i) text_only.data<int64_t>()[i] = 0;
  expect_error<InvalidArgument>([&] { Policy::load(fx.path, v, text_only); }, "no image tokens");
  // Bad inputs of a call fail before compute, and the policy keeps working afterwards.
  const Policy pol = Policy::load(fx.path, v, types);
  expect_error<InvalidArgument>(
      [&] { pol.get_action(fx.in("features"), Tensor(), fx.in("state"), 99, fx.in("noise")); },
      "embodiment id 99");
  expect_error<ShapeError>(
      [&] {
        pol.get_action(fx.in("features").narrow(1, 0, 39).clone(), Tensor(), fx.in("state"), 2,
                       fx.in("noise"));
      },
      "S = 40");
  EXPECT_TRUE(
      close_rel_l2(pol.get_action(fx.in("features"), Tensor(), fx.in("state"), 2, fx.in("noise")),
                   fx.t.at("golden.actions"), 1e-5, "after errors"));
}

}  // namespace
}  // namespace meshnn::test
