// What tools/netns_mesh.sh runs across two network namespaces (two "hosts" joined by a veth link,
// Open MPI over TCP; tests/python/test_netns_mesh.py) and what also holds on one host:
//   - a 1xN stream pipeline on the MPI backend equals the local-thread pipeline of the same mesh
//     bit for bit (the LTX time shard and the H3 stereo split have their MPI-vs-local bit checks
//     in audio_mpi_test.cc and minimax_h3_mpi_test.cc);
//   - with MESHNN_NETNS_CUT_DIR set (only the namespace test sets it): after a first decode each
//     rank writes ready<rank> there and waits for the file `go`, which the test creates after
//     `ip link set down` on host 1; the next decode must end with CommError within the bound.
//     The result line goes to stdout and the process ends at once (MPI_Finalize would wait for
//     the lost host).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "mesh/mpi_comm.h"
#include "meshnn/audio_model.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"
#include "support/stream_test_util.h"

namespace meshnn {
namespace {

std::string pipeline_mesh() { return "1x" + std::to_string(mesh_detail::mpi_world_size()); }

StreamOptions pipeline(Backend b) {
  StreamOptions o;
  o.mesh = pipeline_mesh();
  o.backend = b;
  o.threads = 1;
  return o;
}

TEST(MpiAcrossHosts, StreamPipelineEqualsLocalPipelineBitForBit) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  const int64_t T = 11;
  const Tensor latent = test::random_rows({1, 8, T, 16}, 81, -2.f, 2.f);
  const std::vector<int64_t> cuts = test::random_cuts(T, 3, 82);
  AudioStream mpi = dec.stream(pipeline(Backend::mpi));
  const Tensor y = test::push_cut(mpi, latent, cuts, 2, 2);
  bool ok = true;
  if (mpi.returns_output()) {
    AudioStream local = dec.stream(pipeline(Backend::local));
    const auto bits = test::bit_equal(y, test::push_cut(local, latent, cuts, 2, 2), "pipeline");
    EXPECT_TRUE(bits);
    ok = bits;
  }
  EXPECT_TRUE(test::mpi_all_true(ok));
}

// Waits (bounded) for `path` to exist.
bool wait_for_file(const std::filesystem::path& path, double seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  while (!std::filesystem::exists(path)) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(MpiAcrossHosts, CutLinkEndsTheCallWithCommError) {
  const char* dir = std::getenv("MESHNN_NETNS_CUT_DIR");
  if (!dir) GTEST_SKIP() << "run by tests/python/test_netns_mesh.py across two namespaces";
  const int rank = mesh_detail::mpi_world_rank();
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  const Tensor latent = test::random_normal({1, 8, 40, 16}, 83);
  RunOptions run;
  run.mesh = pipeline_mesh();
  run.backend = Backend::mpi;
  run.threads = 1;
  (void)dec.run(latent, run);
  std::ofstream(std::filesystem::path(dir) / ("ready" + std::to_string(rank))).put('\n');
  ASSERT_TRUE(wait_for_file(std::filesystem::path(dir) / "go", 60));
  const auto t0 = std::chrono::steady_clock::now();
  std::string result = "no error";
  try {
    (void)dec.run(latent, run);
  } catch (const CommError& e) {
    result = std::string("CommError: ") + e.what();
  } catch (const std::exception& e) {
    result = std::string("other error: ") + e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("CUT-RESULT rank %d after %.2f s: %s\n", rank, s, result.c_str());
  std::fflush(stdout);
  std::_Exit(result.rfind("CommError", 0) == 0 ? 0 : 1);
}

}  // namespace
}  // namespace meshnn
