// GR00T VL adapter: whole-adapter goldens per version (PyTorch reference in float64, from
// tools/goldens/gen_gr00t.py), bf16 weights, gather modes, persistent K/V, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "meshnn/gr00t_config.h"
#include "models/gr00t/adapter.h"
#include "models/gr00t/description.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using namespace meshnn::gr00t;

double cosine(const Tensor& a, const Tensor& b) {
  const Tensor x = a.to(DType::f64), y = b.to(DType::f64);
  double xy = 0, xx = 0, yy = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    xy += x.data<double>()[i] * y.data<double>()[i];
    xx += x.data<double>()[i] * x.data<double>()[i];
    yy += y.data<double>()[i] * y.data<double>()[i];
  }
  return xy / std::sqrt(xx * yy);
}

struct Golden {
  Version version;
  Config cfg;
  SlotLayout layout;
  std::map<std::string, Tensor> t;
  int embodiment = 0;

  explicit Golden(Version v) : version(v) {
    const std::string name = std::string("gr00t_adapter_") +
                             (v == Version::n1_5   ? "n1_5"
                              : v == Version::n1_6 ? "n1_6"
                                                   : "n1_7") +
                             ".safetensors";
    io::SafetensorsFile f = open_fixture(name);
    for (const std::string& k : f.keys()) t.emplace(k, f.get(k));
    cfg = Config::from_metadata(f.metadata(), v);
    embodiment = std::stoi(f.metadata().at("embodiment"));
    layout = SlotLayout::from_token_types(t.at("input.token_types"), cfg.row_block);
  }
  Tensor features() const { return layout.rows_to_slots(t.at("input.features")); }
  Tensor mask() const { return cfg.vl.n_blocks ? layout.key_valid_mask() : Tensor(); }
  WeightLookup weights() const { return lookup_in(t); }
};

std::string ver_name(const ::testing::TestParamInfo<Version>& i) {
  std::string s = version_name(i.param);
  return s.substr(0, 2) + "_" + s.substr(3);
}

class Gr00tAdapterGolden : public ::testing::TestWithParam<Version> {};

TEST_P(Gr00tAdapterGolden, F32MatchesPyTorchEveryTapAndOutput) {
  Golden g(GetParam());
  for (GatherMode gm : {GatherMode::splice, GatherMode::onehot}) {
    SCOPED_TRACE(gather_mode_name(gm));
    AdapterOptions opt;
    opt.gather_mode = gm;
    opt.collect_taps = true;
    VlAdapter ad(g.cfg, g.layout, g.weights(), opt);
    AdapterOutputs out = ad.forward(g.features(), g.mask(), g.t.at("input.state"), g.embodiment);
    int checked = 0;
    for (const auto& [name, tap] : out.taps) {
      const Tensor want = g.t.at("golden." + name);
      const Tensor got = name == "state_features" ? tap : g.layout.slots_to_rows(tap);
      EXPECT_TRUE(close_rel_l2(got, want, 1e-5, name));
      ++checked;
    }
    EXPECT_EQ(checked, 2 + (g.cfg.vl.n_blocks ? g.cfg.vl.n_blocks + 1 : 0) + 1);
    for (const auto& [name, set] : out.vl_sets) {
      Tensor want = g.t.at("golden.vl_set." + name);
      EXPECT_TRUE(close_rel_l2(set.reshape(want.shape()), want, 1e-5, "vl_set." + name));
      // Pad rows ≥ L_real are exactly zero (and, for "all", the empty slots).
      const KeySetPlan& ks = ad.plan().key_sets.at(name);
      const int64_t first_pad = ks.identity ? g.layout.seq_len() : ks.l_real;
      for (int64_t i = first_pad * g.cfg.vl.dim; i < set.numel(); ++i)
        ASSERT_EQ(set.data<float>()[i], 0.f) << name << " pad element " << i;
    }
    ASSERT_EQ(out.kv.size(), ad.plan().blocks.size());
    for (const auto& [blk, kv] : out.kv) {
      EXPECT_TRUE(close_rel_l2(kv.first, g.t.at("golden.K." + std::to_string(blk)), 1e-5, "K"));
      EXPECT_TRUE(close_rel_l2(kv.second, g.t.at("golden.V." + std::to_string(blk)), 1e-5, "V"));
    }
    EXPECT_TRUE(close_rel_l2(out.state_features, g.t.at("golden.state_features"), 1e-5, "state"));
  }
}

TEST_P(Gr00tAdapterGolden, GatherModesGiveIdenticalRows) {
  Golden g(GetParam());
  AdapterOptions a, b;
  b.gather_mode = GatherMode::onehot;
  VlAdapter sp(g.cfg, g.layout, g.weights(), a), oh(g.cfg, g.layout, g.weights(), b);
  AdapterOutputs x = sp.forward(g.features(), g.mask(), Tensor(), 0);
  AdapterOutputs y = oh.forward(g.features(), g.mask(), Tensor(), 0);
  for (const auto& [name, set] : x.vl_sets) EXPECT_TRUE(bit_equal(y.vl_sets.at(name), set, name));
  for (const auto& [blk, kv] : x.kv) EXPECT_TRUE(bit_equal(y.kv.at(blk).first, kv.first));
}

TEST_P(Gr00tAdapterGolden, Bf16WeightsMeetCosineGate) {
  Golden g(GetParam());
  AdapterOptions opt;
  opt.precision = Precision::bf16;
  opt.hoist_precision = Precision::bf16;
  opt.state_precision = Precision::bf16;
  opt.collect_taps = true;
  VlAdapter ad(g.cfg, g.layout, g.weights(), opt);
  AdapterOutputs out = ad.forward(g.features(), g.mask(), g.t.at("input.state"), g.embodiment);
  for (const auto& [blk, kv] : out.kv) {
    EXPECT_GE(cosine(kv.first, g.t.at("golden.K." + std::to_string(blk))), 0.999) << blk;
    EXPECT_GE(cosine(kv.second, g.t.at("golden.V." + std::to_string(blk))), 0.999) << blk;
  }
  EXPECT_GE(cosine(g.layout.slots_to_rows(out.vl), g.t.at("golden.dit_encoder_hidden_states")),
            0.999);
  EXPECT_GE(cosine(out.state_features, g.t.at("golden.state_features")), 0.999);
  // The hoist at full f32 accuracy (the seed's HiFi4) while the VL-SA runs bf16.
  opt.hoist_precision = Precision::fp32;
  VlAdapter hifi(g.cfg, g.layout, g.weights(), opt);
  AdapterOutputs o2 = hifi.forward(g.features(), g.mask(), Tensor(), 0);
  for (const auto& [blk, kv] : o2.kv)
    EXPECT_GE(cosine(kv.first, g.t.at("golden.K." + std::to_string(blk))), 0.999);
}

TEST_P(Gr00tAdapterGolden, PersistentKvKeepAddressesUntilRelease) {
  Golden g(GetParam());
  VlAdapter ad(g.cfg, g.layout, g.weights());
  AdapterOutputs a = ad.forward(g.features(), g.mask(), Tensor(), 0);
  std::map<int, const void*> addr;
  for (auto& [b, kv] : a.kv) addr[b] = kv.first.raw();
  const Tensor k0 = a.kv.begin()->second.first.clone();
  ad.free_outputs(a);
  EXPECT_FALSE(a.vl.defined());
  EXPECT_TRUE(a.kv.empty());
  AdapterOutputs b = ad.forward(g.features(), g.mask(), Tensor(), 0);
  for (auto& [blk, kv] : b.kv) EXPECT_EQ(kv.first.raw(), addr.at(blk)) << blk;
  EXPECT_TRUE(bit_equal(b.kv.begin()->second.first, k0));  // free_outputs kept the buffers intact
  ad.release();
  EXPECT_THROW(ad.forward(g.features(), g.mask(), Tensor(), 0), InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Gr00t, Gr00tAdapterGolden,
                         ::testing::Values(Version::n1_5, Version::n1_6, Version::n1_7), ver_name);

// ------------------------------------------------------------------------------------------------
// bad input
// ------------------------------------------------------------------------------------------------

template <class E, class F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(Gr00tAdapterBadInput, ForwardInputs) {
  Golden g(Version::n1_5);
  VlAdapter ad(g.cfg, g.layout, g.weights());
  const Tensor f = g.features(), m = g.mask(), s = g.t.at("input.state");
  expect_error<ShapeError>([&] { ad.forward(Tensor({1, 1, 63, 48}), m, s, 0); }, "features");
  expect_error<ShapeError>([&] { ad.forward(Tensor({1, 1, 64, 47}), m, s, 0); }, "features");
  expect_error<InvalidArgument>([&] { ad.forward(f, Tensor(), s, 0); }, "vl_mask");
  expect_error<ShapeError>([&] { ad.forward(f, Tensor({63}), s, 0); }, "vl_mask");
  expect_error<ShapeError>([&] { ad.forward(f, m, Tensor({1, 1, 33}), 0); }, "state width 33");
  Tensor bad = s.clone();
  bad.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  expect_error<InvalidArgument>([&] { ad.forward(f, m, bad, 0); }, "non-finite");
  bad.data<float>()[3] = std::numeric_limits<float>::infinity();
  expect_error<InvalidArgument>([&] { ad.forward(f, m, bad, 0); }, "non-finite");
  expect_error<InvalidArgument>([&] { ad.forward(f, m, s, 4); }, "embodiment id 4");
  expect_error<InvalidArgument>([&] { ad.forward(f, m, s, -1); }, "embodiment id -1");

  Golden g6(Version::n1_6);
  VlAdapter ad6(g6.cfg, g6.layout, g6.weights());
  expect_error<InvalidArgument>(
      [&] { ad6.forward(g6.features(), g6.layout.key_valid_mask(), Tensor(), 0); }, "vl_mask");
}

TEST(Gr00tAdapterBadInput, NonFiniteFeaturesNameTheFirstBadIndex) {
  Golden g(Version::n1_5);
  VlAdapter ad(g.cfg, g.layout, g.weights());
  const Tensor m = g.mask(), s = g.t.at("input.state");
  Tensor f = g.features().clone();  // (1, 1, 64, 48)
  f.data<float>()[5 * 48 + 7] = std::numeric_limits<float>::quiet_NaN();
  f.data<float>()[9 * 48 + 1] = std::numeric_limits<float>::infinity();
  expect_error<InvalidArgument>([&] { ad.forward(f, m, s, 0); },
                                "features: non-finite value nan at index (0, 0, 5, 7)");
  f.data<float>()[5 * 48 + 7] = 0.5f;
  expect_error<InvalidArgument>([&] { ad.forward(f, m, s, 0); },
                                "non-finite value inf at index (0, 0, 9, 1)");
}

TEST(Gr00tAdapterBadInput, CheckpointAndConfig) {
  Golden g(Version::n1_7);
  auto w = g.t;
  const std::string k = "action_head.model.transformer_blocks.6.attn1.to_v.weight";
  w.erase(k);
  expect_error<WeightError>([&] { VlAdapter(g.cfg, g.layout, lookup_in(w)); }, k);
  w = g.t;
  w[k] = Tensor({24, 47});
  expect_error<WeightError>([&] { VlAdapter(g.cfg, g.layout, lookup_in(w)); }, k);
  w = g.t;
  const std::string s = "action_head.state_encoder.layer1.W";
  w[s] = Tensor({4, 41, 32});
  expect_error<WeightError>([&] { VlAdapter(g.cfg, g.layout, lookup_in(w)); }, s);

  // version / config mismatch: the n1.7 checkpoint's metadata loaded as n1.5 or n1.6
  io::SafetensorsFile f = open_fixture("gr00t_adapter_n1_7.safetensors");
  expect_error<InvalidArgument>([&] { Config::from_metadata(f.metadata(), Version::n1_5); },
                                "version/config mismatch");
  expect_error<InvalidArgument>(
      [&] { Config::from_json(R"({"vl_self_attention_cfg": {"num_layers": 4}})", Version::n1_6); },
      "n1.6 has no VL self-attention");
  expect_error<InvalidArgument>(
      [&] { Config::from_json(R"({"backbone_embedding_dim": 1024})", Version::n1_5); },
      "attention_head_dim");
  expect_error<InvalidArgument>(
      [&] { Config::from_json(R"({"state_dim_pad": 40, "max_state_dim": 33})", Version::n1_5); },
      "state_dim_pad");
  expect_error<FormatError>([&] { Config::from_json("{", Version::n1_5); }, "GR00T config");
  expect_error<InvalidArgument>([&] { parse_version("n2.0"); }, "n2.0");
}

// A config file (the CLI's --config) reads as its text does; errors name the file.
TEST(Gr00tAdapterBadInput, ConfigFileReadsAsItsTextAndErrorsNameIt) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("meshnn-gr00t-cfg-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  const std::string text = R"({"state_dim_pad": 64, "max_state_dim": 33})";
  std::ofstream(good) << text;
  std::ofstream(bad) << "{";
  EXPECT_EQ(Config::from_json_file(good, Version::n1_5).to_json(),
            Config::from_json(text, Version::n1_5).to_json());
  expect_error<FormatError>([&] { Config::from_json_file(bad, Version::n1_5); }, bad);
  expect_error<InvalidArgument>([&] { Config::from_json_file(dir.string(), Version::n1_5); },
                                dir.string());
  std::filesystem::remove_all(dir);
}

TEST(Gr00tAdapterBadInput, LayoutWithoutImageTokensFailsThePlanForAlternateDit) {
  Config c = Config::defaults(Version::n1_6);
  SlotLayout only_text = SlotLayout::from_token_types(std::vector<int>(10, 0));
  expect_error<InvalidArgument>([&] { build_adapter_plan(c, only_text, {}); }, "no image tokens");
  // N1.5 reads "all": fine.
  EXPECT_NO_THROW(build_adapter_plan(Config::defaults(Version::n1_5), only_text, {}));
}

// ------------------------------------------------------------------------------------------------
// configs, slot layout and plan
// ------------------------------------------------------------------------------------------------

TEST(Gr00tConfig, VersionDefaults) {
  const Config a = Config::defaults(Version::n1_5), b = Config::defaults(Version::n1_6),
               c = Config::defaults(Version::n1_7);
  EXPECT_EQ(a.vl.n_blocks, 4);
  EXPECT_EQ(b.vl.n_blocks, 0);
  EXPECT_EQ(c.vl.n_blocks, 4);
  EXPECT_EQ(a.dit.cross_block_indices().size(), 8u);
  EXPECT_EQ(b.dit.cross_block_indices().size(), 16u);
  EXPECT_EQ(b.dit.key_set(0), "text");
  EXPECT_EQ(b.dit.key_set(2), "image");
  EXPECT_EQ(b.dit.key_set(28), "text");
  EXPECT_EQ(b.dit.key_set(30), "image");
  EXPECT_EQ(a.dit.key_set(14), "all");
  EXPECT_EQ(a.state.state_dim_pad, 64);
  EXPECT_EQ(b.state.state_dim_pad, 128);
  EXPECT_EQ(c.state.state_dim_pad, 160);
  EXPECT_EQ(c.state.max_state_dim, 132);
  EXPECT_EQ(parse_version("gr00t_n1_5"), Version::n1_5);
  EXPECT_EQ(parse_version("N1.6"), Version::n1_6);
  EXPECT_EQ(parse_version("n1d7"), Version::n1_7);
  // JSON round trip, and the checkpoint's values win over defaults.
  const Config r = Config::from_json(c.to_json(), Version::n1_7);
  EXPECT_EQ(r.to_json(), c.to_json());
  const Config o =
      Config::from_json(R"({"action_head_cfg": {"max_state_dim": 29}})", Version::n1_6);
  EXPECT_EQ(o.state.max_state_dim, 29);
  EXPECT_EQ(o.state.state_dim_pad, 32);
}

TEST(Gr00tSlotLayout, RowsSlotsRunsAndGather) {
  // text 0..2, image 3..7, padding 8, text 9; S = 10 → S_pad 32
  SlotLayout l = SlotLayout::from_token_types({0, 0, 0, 1, 1, 1, 1, 1, 2, 0});
  EXPECT_EQ(l.s_pad(), 32);
  EXPECT_EQ(l.active_slots(), 10);
  EXPECT_EQ(l.image_runs(), (std::vector<gr00t::Run>{{3, 8}}));
  EXPECT_EQ(l.text_runs(), (std::vector<gr00t::Run>{{0, 3}, {9, 10}}));
  EXPECT_EQ(l.gather_index("text"), (std::vector<int64_t>{0, 1, 2, 9}));
  EXPECT_EQ(l.key_set_lengths("image"), (std::pair<int64_t, int64_t>{5, 32}));
  EXPECT_EQ(l.key_set_lengths("all"), (std::pair<int64_t, int64_t>{32, 32}));
  EXPECT_THROW(l.gather_index("video"), InvalidArgument);
  const Tensor p = l.onehot_gather_matrix("text");
  EXPECT_EQ(p.shape(), (Shape{32, 32}));
  double total = 0;
  for (int64_t i = 0; i < p.numel(); ++i) total += p.data<float>()[i];
  EXPECT_EQ(total, 4);
  EXPECT_EQ(p.data<float>()[3 * 32 + 9], 1.f);
  const Tensor x = random_normal({1, 10, 6}, 3);
  const Tensor s = l.rows_to_slots(x);
  EXPECT_EQ(s.shape(), (Shape{1, 1, 32, 6}));
  for (int64_t i = 60; i < s.numel(); ++i) EXPECT_EQ(s.data<float>()[i], 0.f);
  EXPECT_TRUE(bit_equal(l.slots_to_rows(s), x));
  EXPECT_THROW(l.rows_to_slots(random_normal({1, 9, 6}, 3)), ShapeError);
  EXPECT_THROW(l.slots_to_rows(random_normal({1, 1, 31, 6}, 3)), ShapeError);
  // A general (non-identity) layout: tokens in scattered slots.
  SlotLayout sc({5, 0, 40}, {TokenType::text, TokenType::image, TokenType::text}, 64, 32);
  EXPECT_EQ(sc.active_slots(), 41);
  EXPECT_EQ(sc.gather_index("text"), (std::vector<int64_t>{5, 40}));
  EXPECT_TRUE(bit_equal(sc.slots_to_rows(sc.rows_to_slots(random_normal({3, 4}, 1))),
                        random_normal({1, 3, 4}, 1)));
  EXPECT_THROW(SlotLayout({5, 5}, {TokenType::text, TokenType::text}, 32, 32), InvalidArgument);
  EXPECT_THROW(SlotLayout({32}, {TokenType::text}, 32, 32), InvalidArgument);
  EXPECT_THROW(SlotLayout({0}, {TokenType::text}, 48, 32), InvalidArgument);
  EXPECT_THROW(SlotLayout::from_token_types({0, 3}), InvalidArgument);
}

TEST(Gr00tSlotLayout, StateRows) {
  Tensor s = random_normal({1, 1, 20}, 5);
  Tensor r = state_rows(s, 32);
  EXPECT_EQ(r.shape(), (Shape{1, 1, 32, 32}));
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(r.data<float>()[i], s.data<float>()[i]);
  for (int64_t i = 20; i < r.numel(); ++i) EXPECT_EQ(r.data<float>()[i], 0.f);
  EXPECT_THROW(state_rows(random_normal({1, 1, 33}, 1), 32), ShapeError);
  EXPECT_THROW(state_rows(random_normal({2, 1, 3}, 1), 32), ShapeError);
}

TEST(Gr00tPlan, DescribeIsJsonWithKeySetsAndBlocks) {
  Config c = Config::defaults(Version::n1_7);
  std::vector<int> types(300, 0);
  for (int i = 4; i < 116; ++i) types[i] = 1;  // the seed's N1.7 example image run [4, 116)
  const AdapterPlan p = build_adapter_plan(c, SlotLayout::from_token_types(types), {});
  const auto j = nlohmann::json::parse(p.describe());
  EXPECT_EQ(j["version"], "n1.7");
  EXPECT_EQ(j["s_pad"], 320);
  EXPECT_EQ(j["key_sets"]["image"]["l_real"], 112);
  EXPECT_EQ(j["key_sets"]["image"]["l_pad"], 128);
  EXPECT_EQ(j["key_sets"]["text"]["l_real"], 188);
  EXPECT_EQ(j["key_sets"]["text"]["l_pad"], 192);
  EXPECT_EQ(j["blocks"].size(), 16u);
  EXPECT_EQ(j["blocks"][1]["key_set"], "image");
  EXPECT_EQ(j["dit"]["kv_width"], 3072);
  EXPECT_EQ(j["hoist_lengths"], (std::vector<int64_t>{128, 192}));
  EXPECT_TRUE(j["vl_mask"].get<bool>());
  AdapterOptions bad;
  bad.precision = Precision::bf16x2;
  EXPECT_THROW(build_adapter_plan(c, SlotLayout::from_token_types(types), bad), InvalidArgument);
}

TEST(Gr00tCheckpoint, RandomWriterCoversEveryKeyAndWorksAtRealDimsN16) {
  // N1.6 at the released widths (no VL-SA) with 4 DiT layers instead of 32 to keep the test
  // light: every key, every shape, and a forward.
  Config c = Config::defaults(Version::n1_6);
  c.dit.n_layers = 4;
  auto ck = make_random_checkpoint(c, 7);
  EXPECT_EQ(ck.size(), tensor_shapes(describe_adapter(c, default_weight_prefix())).size());
  std::vector<int> types(100, 0);
  for (int i = 44; i < 81; ++i) types[i] = 1;
  SlotLayout l = SlotLayout::from_token_types(types);
  VlAdapter ad(c, l, lookup_in(ck));
  AdapterOutputs out = ad.forward(random_normal({1, 1, l.s_pad(), 2048}, 1), Tensor(),
                                  random_normal({1, 1, 128}, 2), 31);
  EXPECT_EQ(out.kv.size(), 2u);
  EXPECT_EQ(out.kv.at(2).first.shape(), (Shape{1, 32, 64, 48}));  // image: 37 → 64
  EXPECT_EQ(out.kv.at(0).first.shape(), (Shape{1, 32, 64, 48}));  // text: 63 → 64
  EXPECT_EQ(out.state_features.shape(), (Shape{1, 1, 1536}));
  // detect_weight_prefix finds LeRobot-style prefixes
  EXPECT_EQ(detect_weight_prefix({"x", "_groot_model.action_head.vlln.weight"}),
            "_groot_model.action_head.");
  EXPECT_THROW(detect_weight_prefix({"foo"}), WeightError);
}

}  // namespace
}  // namespace meshnn::test
