// `--mesh auto` on the mpi backend follows the scale-out rule (src/runtime/scale_rule.h): the
// MiniMax-H3 stereo decode splits its two items over the two ranks (bit for bit the explicit
// 1x2 call); an LTX-2.3 decode splits time on a link fast enough (MESHNN_LINK) and is refused,
// naming replicas, on one too slow for its compute per halo byte.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "mesh/mpi_comm.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"

namespace meshnn {
namespace {

RunOptions mpi_run(const std::string& mesh) {
  RunOptions r;
  r.mesh = mesh;
  r.backend = Backend::mpi;
  r.threads = 1;
  return r;
}

TEST(MpiMeshAuto, StereoSplitsByItem) {
  if (mesh_detail::mpi_world_size() != 2) GTEST_SKIP() << "the 2-rank case";
  const AudioModel vae = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  const Tensor z = test::random_normal({2, 8, 12}, 95);
  ::setenv("MESHNN_LINK", "1g", 1);  // items need no halos: the link does not matter
  const Tensor a = vae.run(z, mpi_run("auto"));
  ::unsetenv("MESHNN_LINK");
  const auto bits = test::bit_equal(a, vae.run(z, mpi_run("1x2")), "auto vs 1x2");
  EXPECT_TRUE(bits);
  EXPECT_TRUE(test::mpi_all_true(bits));
}

TEST(MpiMeshAuto, LtxTimeSplitOnlyOnAFastEnoughLink) {
  const int n = mesh_detail::mpi_world_size();
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  const Tensor z = test::random_normal({1, 8, 40, 16}, 96);
  ::setenv("MESHNN_LINK", "10000:0", 1);  // 10 Tb/s, no latency: time pays
  const Tensor a = dec.run(z, mpi_run("auto"));
  const auto bits = test::bit_equal(a, dec.run(z, mpi_run("1x" + std::to_string(n))), "auto");
  EXPECT_TRUE(bits);
  ::setenv("MESHNN_LINK", "0.001:100000", 1);  // 1 Mb/s, 100 ms: replicas
  std::string error;
  try {
    (void)dec.run(z, mpi_run("auto"));
  } catch (const InvalidArgument& e) {
    error = e.what();
  }
  ::unsetenv("MESHNN_LINK");
  EXPECT_NE(error.find("run replicas instead"), std::string::npos) << error;
  EXPECT_TRUE(test::mpi_all_true(bits && !error.empty()));
}

}  // namespace
}  // namespace meshnn
