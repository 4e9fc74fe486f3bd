// Head-parallel GR00T adapter on the MPI backend (one process per device; CTest runs this binary
// under mpiexec -np 2 and -np 4): mesh 1×world equals the single-device adapter of this rank.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>
#include <mpi.h>

#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/adapter.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using namespace meshnn::gr00t;

TEST(MpiGr00t, HeadParallelEqualsSingleDevice) {
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (4 % world != 0) GTEST_SKIP() << "heads (4) not divisible by " << world << " ranks";
  const Config cfg = Config::from_json(
      R"({"backbone_embedding_dim": 64, "max_state_dim": 20, "hidden_size": 32, "input_embedding_dim": 48,
          "max_num_embodiments": 3,
          "vl_self_attention_cfg": {"num_layers": 2, "num_attention_heads": 4, "attention_head_dim": 16,
                                    "ff_inner_dim": 256},
          "diffusion_model_cfg": {"num_layers": 8, "num_attention_heads": 4, "attention_head_dim": 12,
                                  "cross_attention_dim": 64}})",
      Version::n1_7);
  std::vector<int> types(45, 0);
  for (int i = 7; i < 30; ++i) types[i] = 1;
  const SlotLayout layout = SlotLayout::from_token_types(types);
  const auto ck = make_random_checkpoint(cfg, 77);
  const Tensor x = layout.rows_to_slots(test::random_normal({1, 45, 64}, 5, 2.f));
  const Tensor st = test::random_normal({1, 1, 17}, 6);
  AdapterOptions opt;
  VlAdapter ref(cfg, layout, lookup_in(ck), opt);
  const AdapterOutputs want = ref.forward(x, layout.key_valid_mask(), st, 1);
  MeshConfig mc;
  mc.rows = 1;
  mc.cols = world;
  mc.backend = Backend::mpi;
  run_spmd(mc, [&](Device& dev) {
    VlAdapter ad(cfg, layout, lookup_in(ck), opt, "action_head.", &dev);
    AdapterOutputs o = ad.forward(x, layout.key_valid_mask(), st, 1);
    EXPECT_TRUE(
        test::close_rel_l2(layout.slots_to_rows(o.vl), layout.slots_to_rows(want.vl), 1e-6, "vl"));
    for (const auto& [b, kv] : want.kv) {
      EXPECT_TRUE(
          test::close_rel_l2(dev.ccl().all_gather(o.kv.at(b).first, 1, 1), kv.first, 1e-6, "K"));
      EXPECT_TRUE(
          test::close_rel_l2(dev.ccl().all_gather(o.kv.at(b).second, 1, 1), kv.second, 1e-6, "V"));
    }
    EXPECT_TRUE(test::close_rel_l2(o.state_features, want.state_features, 1e-6, "state"));
  });
}

}  // namespace
}  // namespace meshnn
