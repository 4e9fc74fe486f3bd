// GR00T action head: per-version goldens of every Euler step's velocity and the final actions
// (PyTorch reference in float64, tools/goldens/gen_gr00t_action_head.py), bf16 weights, cross K/V
// hoisted once per observation (counted), head-parallel over a mesh axis, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/action_head.h"
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

const char* fixture_tag(Version v) {
  return v == Version::n1_5 ? "n1_5" : v == Version::n1_6 ? "n1_6" : "n1_7";
}

struct HeadGolden {
  Config cfg;
  ActionHeadConfig hc;
  SlotLayout layout;
  std::map<std::string, Tensor> t;
  int embodiment = 0;

  explicit HeadGolden(Version v) {
    io::SafetensorsFile f =
        open_fixture(std::string("gr00t_head_") + fixture_tag(v) + ".safetensors");
    for (const std::string& k : f.keys()) t.emplace(k, f.get(k));
    cfg = Config::from_metadata(f.metadata(), v);
    hc = ActionHeadConfig::from_metadata(f.metadata(), v);
    embodiment = std::stoi(f.metadata().at("embodiment"));
    layout = SlotLayout::from_token_types(t.at("input.token_types"), cfg.row_block);
  }
  WeightLookup weights() const { return lookup_in(t); }
};

std::string ver_name(const ::testing::TestParamInfo<Version>& i) {
  std::string s = version_name(i.param);
  return s.substr(0, 2) + "_" + s.substr(3);
}

class Gr00tHeadGolden : public ::testing::TestWithParam<Version> {};

TEST_P(Gr00tHeadGolden, F32EveryStepAndActionsMatchPyTorch) {
  HeadGolden g(GetParam());
  PolicyRunner pol(g.cfg, g.hc, g.layout, g.weights());
  std::vector<std::string> runs = {"golden."};
  if (g.t.count("golden3.actions")) runs.push_back("golden3.");
  for (const std::string& pre : runs) {
    SCOPED_TRACE(pre);
    int steps = 0;
    while (g.t.count(pre + "velocity." + std::to_string(steps))) ++steps;
    ASSERT_GT(steps, 0);
    std::vector<Tensor> vel;
    const Tensor act = pol.get_action(g.t.at("input.features"), g.t.at("input.state"), g.embodiment,
                                      g.t.at("input.noise"), 0, steps, &vel);
    ASSERT_EQ(vel.size(), static_cast<size_t>(steps));
    double worst = 0;
    for (int k = 0; k < steps; ++k) {
      const Tensor& want = g.t.at(pre + "velocity." + std::to_string(k));
      EXPECT_TRUE(close_rel_l2(vel[k], want, 1e-5, "velocity " + std::to_string(k)));
      worst = std::max(worst, compare(vel[k], want).rel_l2);
    }
    EXPECT_TRUE(close_rel_l2(act, g.t.at(pre + "actions"), 1e-5, "actions"));
    std::printf("[ f32  ] %s %s: worst step velocity rel L2 %.2e, actions rel L2 %.2e\n",
                version_name(GetParam()), pre.c_str(), worst,
                compare(act, g.t.at(pre + "actions")).rel_l2);
    EXPECT_EQ(act.shape(), (Shape{1, g.hc.action_horizon, g.hc.action_dim}));
  }
}

TEST_P(Gr00tHeadGolden, CrossKvProjectedOncePerObservation) {
  HeadGolden g(GetParam());
  PolicyRunner pol(g.cfg, g.hc, g.layout, g.weights());
  const int64_t n_cross = static_cast<int64_t>(g.cfg.dit.cross_block_indices().size());
  const int64_t L = g.cfg.dit.n_layers;
  for (int call = 1; call <= 2; ++call) {
    pol.get_action(g.t.at("input.features"), g.t.at("input.state"), g.embodiment,
                   g.t.at("input.noise"), 0, 4);
    // One projection per cross block per observation, none per step: 4 steps did not multiply it.
    EXPECT_EQ(pol.adapter().hoist_projections(), call * n_cross);
    const ActionHeadStats& s = pol.head().stats();
    EXPECT_EQ(s.cross_kv_projections, 0);
    EXPECT_EQ(s.steps, call * 4);
    EXPECT_EQ(s.q_projections, call * 4 * L);
    EXPECT_EQ(s.self_kv_projections, call * 4 * (L - n_cross));
    // t-only vectors are made once per bucket and reused by later observations.
    EXPECT_EQ(s.timestep_buckets_computed, 4);
  }
}

TEST_P(Gr00tHeadGolden, Bf16WeightsCloseToFp32) {
  HeadGolden g(GetParam());
  PolicyOptions opt;
  opt.adapter.precision = opt.adapter.hoist_precision = opt.adapter.state_precision =
      Precision::bf16;
  opt.head.precision = Precision::bf16;
  PolicyRunner pol(g.cfg, g.hc, g.layout, g.weights(), opt);
  const Tensor act = pol.get_action(g.t.at("input.features"), g.t.at("input.state"), g.embodiment,
                                    g.t.at("input.noise"), 0, 4);
  const Tensor& want = g.t.at("golden.actions");
  const double cos = cosine(act, want);
  const CompareStats st = compare(act, want);
  std::printf("[ bf16 ] %s actions: cosine %.7f, rel L2 %.3e, max abs %.3e\n",
              version_name(GetParam()), cos, st.rel_l2, st.max_abs);
  EXPECT_GE(cos, 0.999);
}

TEST_P(Gr00tHeadGolden, SeededNoiseIsDeterministic) {
  HeadGolden g(GetParam());
  PolicyRunner pol(g.cfg, g.hc, g.layout, g.weights());
  const Tensor a =
      pol.get_action(g.t.at("input.features"), g.t.at("input.state"), g.embodiment, Tensor(), 7);
  const Tensor b =
      pol.get_action(g.t.at("input.features"), g.t.at("input.state"), g.embodiment, Tensor(), 7);
  const Tensor c =
      pol.get_action(g.t.at("input.features"), g.t.at("input.state"), g.embodiment, Tensor(), 8);
  EXPECT_TRUE(bit_equal(a, b, "same seed"));
  EXPECT_GT(compare(a, c).max_abs, 1e-3);
  const Tensor n = seeded_noise(64, 64, 3);
  double m = 0, v = 0;
  for (int64_t i = 0; i < n.numel(); ++i) m += n.data<float>()[i];
  m /= n.numel();
  for (int64_t i = 0; i < n.numel(); ++i) v += (n.data<float>()[i] - m) * (n.data<float>()[i] - m);
  v /= n.numel();
  EXPECT_NEAR(m, 0.0, 0.05);
  EXPECT_NEAR(v, 1.0, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Gr00t, Gr00tHeadGolden,
                         ::testing::Values(Version::n1_5, Version::n1_6, Version::n1_7), ver_name);

// ---- bad input: clear errors before any compute ------------------------------------------------

TEST(Gr00tHeadErrors, BadInputsAreRejected) {
  HeadGolden g(Version::n1_7);
  PolicyRunner pol(g.cfg, g.hc, g.layout, g.weights());
  const Tensor& f = g.t.at("input.features");
  const Tensor& st = g.t.at("input.state");
  const Tensor& nz = g.t.at("input.noise");
  // wrong feature width
  EXPECT_THROW(pol.get_action(random_normal({1, f.dim(1), f.dim(2) + 1}, 1), st, 2, nz),
               ShapeError);
  // unknown embodiment
  EXPECT_THROW(pol.get_action(f, st, g.cfg.state.num_embodiments, nz), InvalidArgument);
  EXPECT_THROW(pol.get_action(f, st, -1, nz), InvalidArgument);
  // state wider than max_state_dim
  EXPECT_THROW(pol.get_action(f, random_normal({1, 1, g.cfg.state.max_state_dim + 1}, 2), 2, nz),
               InvalidArgument);
  // NaN anywhere
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor fn = f.clone();
  fn.data<float>()[17] = nan;
  EXPECT_THROW(pol.get_action(fn, st, 2, nz), InvalidArgument);
  Tensor sn = st.clone();
  sn.data<float>()[0] = nan;
  EXPECT_THROW(pol.get_action(f, sn, 2, nz), InvalidArgument);
  Tensor nn = nz.clone();
  nn.data<float>()[3] = nan;
  EXPECT_THROW(pol.get_action(f, st, 2, nn), InvalidArgument);
  // wrong noise shape
  EXPECT_THROW(
      pol.get_action(f, st, 2, random_normal({1, g.hc.action_horizon + 1, g.hc.action_dim}, 3)),
      ShapeError);
  EXPECT_EQ(pol.adapter().hoist_projections(), 0);  // nothing ran
}

TEST(Gr00tHeadErrors, CheckpointOfAnotherVersion) {
  io::SafetensorsFile f = open_fixture("gr00t_head_n1_5.safetensors");
  EXPECT_THROW(Config::from_metadata(f.metadata(), Version::n1_7), InvalidArgument);
  // Without metadata, the structure gives it away: N1.5 weights under the N1.6 config.
  HeadGolden g(Version::n1_5);
  Config c16 = g.cfg;
  c16.version = Version::n1_7;
  c16.dit.key_sets = CrossKeySets::text_image;
  ActionHeadConfig h16 = g.hc;
  h16.future_tokens = 0;
  h16.action_dim += 1;
  EXPECT_THROW(ActionHead(c16, h16, g.weights()), WeightError);
}

TEST(Gr00tHeadErrors, EveryMissingKeyIsListed) {
  HeadGolden g(Version::n1_6);
  std::map<std::string, Tensor> w = g.t;
  w.erase("action_head.model.transformer_blocks.3.attn1.to_q.weight");
  w.erase("action_head.action_decoder.layer2.b");
  w["action_head.position_embedding.weight"] = Tensor({3, 3});
  try {
    ActionHead head(g.cfg, g.hc, lookup_in(w));
    FAIL() << "expected a WeightError";
  } catch (const WeightError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("3 checkpoint tensor problem(s)"), std::string::npos) << m;
    EXPECT_NE(m.find("transformer_blocks.3.attn1.to_q.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("action_decoder.layer2.b"), std::string::npos) << m;
    EXPECT_NE(m.find("position_embedding.weight' has shape"), std::string::npos) << m;
  }
}

TEST(Gr00tHeadErrors, EmptyKeySetRejected) {
  HeadGolden g(Version::n1_6);
  std::vector<int> types(40, 0);  // no image tokens: the image blocks would attend nothing
  const SlotLayout l = SlotLayout::from_token_types(types, g.cfg.row_block);
  try {
    PolicyRunner pol(g.cfg, g.hc, l, g.weights());
    pol.get_action(g.t.at("input.features"), g.t.at("input.state"), 2, g.t.at("input.noise"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("image"), std::string::npos) << e.what();
  }
}

// ---- head-parallel: DiT heads and FF split over one mesh axis equal the single device ----------

Config tp_config(Version v) {
  const char* vlsa =
      v == Version::n1_6
          ? R"("use_vl_self_attention": false, "vl_self_attention_cfg": {"num_layers": 0},)"
          : R"("vl_self_attention_cfg": {"num_layers": 1, "num_attention_heads": 4, "attention_head_dim": 16, "ff_inner_dim": 128},)";
  return Config::from_json(
      std::string("{") + vlsa +
          R"("backbone_embedding_dim": 64, "max_state_dim": 20, "hidden_size": 32,
      "input_embedding_dim": 48, "max_num_embodiments": 3,
      "diffusion_model_cfg": {"num_layers": 4, "num_attention_heads": 4, "attention_head_dim": 12,
                              "cross_attention_dim": 64}})",
      v);
}

struct TpParam {
  Version v;
  int rows, cols;
};
class Gr00tActionHeadParallel : public ::testing::TestWithParam<TpParam> {};

TEST_P(Gr00tActionHeadParallel, EqualsSingleDevice) {
  const TpParam prm = GetParam();
  const Config cfg = tp_config(prm.v);
  ActionHeadConfig hc = ActionHeadConfig::defaults(prm.v);
  hc.action_dim = 7, hc.action_horizon = 5, hc.max_seq_len = 8;
  hc.future_tokens = prm.v == Version::n1_5 ? 3 : 0;
  const auto ck = make_random_head_checkpoint(cfg, hc, 91);
  std::vector<int> types(45, 0);
  for (int i = 7; i < 30; ++i) types[i] = 1;
  const SlotLayout layout = SlotLayout::from_token_types(types);
  const Tensor x = random_normal({1, 45, 64}, 5, 2.f);
  const Tensor st = random_normal({1, 1, 17}, 6);
  const Tensor nz = random_normal({1, 5, 7}, 7);
  PolicyOptions opt;
  opt.adapter.mesh_axis = prm.rows > 1 ? 0 : 1;
  PolicyRunner ref(cfg, hc, layout, lookup_in(ck), opt);
  std::vector<Tensor> want_v;
  const Tensor want = ref.get_action(x, st, 1, nz, 0, 4, &want_v);
  MeshConfig mc;
  mc.rows = prm.rows;
  mc.cols = prm.cols;
  mc.threads_per_device = 1;
  std::mutex mu;
  std::vector<Tensor> got(static_cast<size_t>(prm.rows * prm.cols));
  run_spmd(mc, [&](Device& dev) {
    PolicyRunner pol(cfg, hc, layout, lookup_in(ck), opt, "action_head.", &dev);
    Tensor a = pol.get_action(x, st, 1, nz, 0, 4);
    std::lock_guard<std::mutex> lock(mu);
    got[static_cast<size_t>(dev.rank())] = a;
  });
  for (size_t r = 0; r < got.size(); ++r)
    EXPECT_TRUE(close_rel_l2(got[r], want, 1e-6, "device " + std::to_string(r)));
}

INSTANTIATE_TEST_SUITE_P(
    Gr00t, Gr00tActionHeadParallel,
    ::testing::Values(TpParam{Version::n1_5, 1, 2}, TpParam{Version::n1_5, 1, 4},
                      TpParam{Version::n1_6, 1, 4}, TpParam{Version::n1_7, 1, 2},
                      TpParam{Version::n1_7, 1, 4}, TpParam{Version::n1_7, 2, 1}),
    [](const ::testing::TestParamInfo<TpParam>& i) {
      std::string s = version_name(i.param.v);
      return s.substr(0, 2) + "_" + s.substr(3) + "_" + std::to_string(i.param.rows) + "x" +
             std::to_string(i.param.cols);
    });

}  // namespace
}  // namespace meshnn::test

namespace meshnn::test {
namespace {

// The key table at the released dims gives the reference's parameter counts (DiT, action encoder
// and decoder over all 32 embodiments).
TEST(Gr00tHeadShapes, ReleasedParameterCounts) {
  using namespace meshnn::gr00t;
  const struct {
    Version v;
    int64_t dit, enc, dec;
  } want[] = {{Version::n1_5, 550386688, 228212736, 34636800},
              {Version::n1_6, 1091722240, 232931328, 37785600},
              {Version::n1_7, 1091722240, 233127936, 37916800}};
  for (const auto& w : want) {
    int64_t dit = 0, enc = 0, dec = 0;
    for (const auto& [key, shape] : tensor_shapes(describe_action_head(
             Config::defaults(w.v), ActionHeadConfig::defaults(w.v), default_weight_prefix()))) {
      const int64_t n = shape_numel(shape);
      if (key.rfind("action_head.model.", 0) == 0) dit += n;
      if (key.rfind("action_head.action_encoder.", 0) == 0) enc += n;
      if (key.rfind("action_head.action_decoder.", 0) == 0) dec += n;
    }
    EXPECT_EQ(dit, w.dit) << version_name(w.v);
    EXPECT_EQ(enc, w.enc) << version_name(w.v);
    EXPECT_EQ(dec, w.dec) << version_name(w.v);
  }
}

}  // namespace
}  // namespace meshnn::test
