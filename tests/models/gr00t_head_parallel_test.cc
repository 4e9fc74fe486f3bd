// Head-parallel GR00T adapter (issue 6 item 8): the VL-SA heads and the hoisted DiT K/V split over
// the devices of a mesh axis equal the 1×1 run, on local meshes 1×2, 1×4 and 2×1 (axis 0).
#include <gtest/gtest.h>

#include <mutex>

#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/adapter.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using namespace meshnn::gr00t;

// Reduced dims with head counts divisible by 4 (VL-SA 4 × 16, DiT 4 × 12, FF 256).
Config small(Version v) {
  const char* vlsa =
      v == Version::n1_6
          ? R"("use_vl_self_attention": false, "vl_self_attention_cfg": {"num_layers": 0},)"
          : R"("vl_self_attention_cfg": {"num_layers": 4, "num_attention_heads": 4, "attention_head_dim": 16, "ff_inner_dim": 256},)";
  const std::string j =
      std::string("{") + vlsa +
      R"("backbone_embedding_dim": 64, "max_state_dim": 20, "hidden_size": 32, "input_embedding_dim": 48,
         "max_num_embodiments": 3,
         "diffusion_model_cfg": {"num_layers": 8, "num_attention_heads": 4, "attention_head_dim": 12,
                                 "cross_attention_dim": 64}})";
  return Config::from_json(j, v);
}

struct Param {
  Version v;
  int rows, cols;
};

class Gr00tHeadParallel : public ::testing::TestWithParam<Param> {};

TEST_P(Gr00tHeadParallel, EqualsSingleDevice) {
  const Param prm = GetParam();
  const Config cfg = small(prm.v);
  std::vector<int> types(45, 0);
  for (int i = 7; i < 30; ++i) types[i] = 1;
  types[44] = 2;
  const SlotLayout layout = SlotLayout::from_token_types(types);
  const auto ck = make_random_checkpoint(cfg, 77);
  const Tensor x = layout.rows_to_slots(random_normal({1, 45, 64}, 5, 2.f));
  const Tensor st = random_normal({1, 1, 17}, 6);
  const Tensor mask = cfg.vl.n_blocks ? layout.key_valid_mask() : Tensor();
  AdapterOptions opt;
  opt.collect_taps = true;
  opt.mesh_axis = prm.rows > 1 ? 0 : 1;
  VlAdapter ref(cfg, layout, lookup_in(ck), opt);
  const AdapterOutputs want = ref.forward(x, mask, st, 1);

  MeshConfig mc;
  mc.rows = prm.rows;
  mc.cols = prm.cols;
  mc.threads_per_device = 1;
  std::mutex mu;
  std::vector<AdapterOutputs> got(static_cast<size_t>(prm.rows * prm.cols));
  std::vector<std::map<int, Tensor>> k_full(got.size());
  run_spmd(mc, [&](Device& dev) {
    VlAdapter ad(cfg, layout, lookup_in(ck), opt, "action_head.", &dev);
    AdapterOutputs o = ad.forward(x, mask, st, 1);
    std::map<int, Tensor> kf;
    for (auto& [b, kv] : o.kv) {
      EXPECT_EQ(kv.first.dim(1), cfg.dit.n_heads / (prm.rows * prm.cols));
      kf[b] = dev.ccl().all_gather(kv.first, 1, opt.mesh_axis);  // heads back in order
    }
    std::lock_guard<std::mutex> lock(mu);
    got[static_cast<size_t>(dev.rank())] = std::move(o);
    k_full[static_cast<size_t>(dev.rank())] = std::move(kf);
  });
  for (size_t r = 0; r < got.size(); ++r) {
    SCOPED_TRACE("device " + std::to_string(r));
    EXPECT_TRUE(
        close_rel_l2(layout.slots_to_rows(got[r].vl), layout.slots_to_rows(want.vl), 1e-6, "vl"));
    // Taps in token order: head-parallel runs the VL-SA on s_active rounded up to the device
    // count, so pad slots beyond s_active hold (masked, later zeroed) values the 1×1 run skips.
    for (const auto& [name, tap] : want.taps) {
      if (name == "state_features") continue;
      EXPECT_TRUE(close_rel_l2(layout.slots_to_rows(got[r].taps.at(name)),
                               layout.slots_to_rows(tap), 1e-6, name));
    }
    for (const auto& [b, kv] : want.kv) {
      EXPECT_TRUE(close_rel_l2(k_full[r].at(b), kv.first, 1e-6, "K" + std::to_string(b)));
      // this device's V heads are its slice of the 1×1 V
      const int64_t hl = kv.second.dim(1) / static_cast<int64_t>(got.size());
      EXPECT_TRUE(close_rel_l2(got[r].kv.at(b).second,
                               kv.second.narrow(1, static_cast<int64_t>(r) * hl, hl), 1e-6, "V"));
    }
    EXPECT_TRUE(close_rel_l2(got[r].state_features, want.state_features, 1e-6, "state"));
  }
}

INSTANTIATE_TEST_SUITE_P(Gr00t, Gr00tHeadParallel,
                         ::testing::Values(Param{Version::n1_5, 1, 2}, Param{Version::n1_5, 1, 4},
                                           Param{Version::n1_7, 1, 2}, Param{Version::n1_7, 1, 4},
                                           Param{Version::n1_7, 2, 1}, Param{Version::n1_6, 1, 4}),
                         [](const ::testing::TestParamInfo<Param>& i) {
                           std::string s = version_name(i.param.v);
                           return s.substr(0, 2) + "_" + s.substr(3) + "_" +
                                  std::to_string(i.param.rows) + "x" + std::to_string(i.param.cols);
                         });

TEST(Gr00tHeadParallelPlan, RejectsIndivisibleHeads) {
  Config cfg = Config::defaults(Version::n1_5);
  const SlotLayout l = SlotLayout::from_token_types(std::vector<int>(40, 0));
  EXPECT_THROW(build_adapter_plan(cfg, l, {}, nullptr, "action_head.", 3, 0), InvalidArgument);
  EXPECT_NO_THROW(build_adapter_plan(cfg, l, {}, nullptr, "action_head.", 4, 3));
}

}  // namespace
}  // namespace meshnn::test
