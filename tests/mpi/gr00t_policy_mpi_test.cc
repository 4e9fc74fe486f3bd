// Head-parallel GR00T policy (adapter + flow-matching action head) on the MPI backend: mesh
// 1×world equals the single-device policy of this rank (CTest runs this binary under mpiexec).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>
#include <mpi.h>

#include "meshnn/gr00t_config.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "models/gr00t/action_head.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using namespace meshnn::gr00t;

TEST(MpiGr00tPolicy, HeadParallelEqualsSingleDevice) {
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (4 % world != 0) GTEST_SKIP() << "heads (4) not divisible by " << world << " ranks";
  const Config cfg = Config::from_json(
      R"({"backbone_embedding_dim": 64, "max_state_dim": 20, "hidden_size": 32, "input_embedding_dim": 48,
          "max_num_embodiments": 3,
          "vl_self_attention_cfg": {"num_layers": 1, "num_attention_heads": 4, "attention_head_dim": 16,
                                    "ff_inner_dim": 128},
          "diffusion_model_cfg": {"num_layers": 4, "num_attention_heads": 4, "attention_head_dim": 12,
                                  "cross_attention_dim": 64}})",
      Version::n1_7);
  ActionHeadConfig hc = ActionHeadConfig::defaults(Version::n1_7);
  hc.action_dim = 7, hc.action_horizon = 5, hc.max_seq_len = 8;
  const auto ck = make_random_head_checkpoint(cfg, hc, 91);
  std::vector<int> types(45, 0);
  for (int i = 7; i < 30; ++i) types[i] = 1;
  const SlotLayout layout = SlotLayout::from_token_types(types);
  const Tensor x = test::random_normal({1, 45, 64}, 5, 2.f);
  const Tensor st = test::random_normal({1, 1, 17}, 6);
  const Tensor nz = test::random_normal({1, 5, 7}, 7);
  PolicyRunner ref(cfg, hc, layout, lookup_in(ck));
  const Tensor want = ref.get_action(x, st, 1, nz, 0, 4);
  MeshConfig mc;
  mc.rows = 1;
  mc.cols = world;
  mc.backend = Backend::mpi;
  run_spmd(mc, [&](Device& dev) {
    PolicyRunner pol(cfg, hc, layout, lookup_in(ck), {}, "action_head.", &dev);
    EXPECT_TRUE(test::close_rel_l2(pol.get_action(x, st, 1, nz, 0, 4), want, 1e-6, "actions"));
  });
}

}  // namespace
}  // namespace meshnn
