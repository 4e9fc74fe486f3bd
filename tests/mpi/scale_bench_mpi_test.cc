// The measurements behind docs/scale_out.md's table, run by tools/bench_scale.sh (skipped unless
// MESHNN_SCALE_BENCH_DIR names a folder with real-size checkpoints: ltx23.safetensors, bigvgan/,
// h3/, as tools/make_checkpoint.py writes them). On 2 ranks: the LTX-2.3 2 s decode time-sharded
// 1x2, the MiniMax-H3 stereo decode split by item 1x2, the BigVGAN stream as a 1x2 pipeline; on
// 1 process the same on one device (the reference); also the BigVGAN one-shot time shard. Rank 0
// prints one line per case: median wall time of a call (or of a whole stream) and, with
// MESHNN_SCALE_BENCH_IFACE (the link's interface in rank 0's network namespace), the bytes and
// packets that crossed it per call / per push.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "mesh/mpi_comm.h"
#include "meshnn/audio_model.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"

namespace meshnn {
namespace {

const char* bench_dir() { return std::getenv("MESHNN_SCALE_BENCH_DIR"); }

int64_t counter(const std::string& name) {
  const char* iface = std::getenv("MESHNN_SCALE_BENCH_IFACE");
  if (!iface) return 0;
  std::ifstream f(std::string("/sys/class/net/") + iface + "/statistics/" + name);
  int64_t v = 0;
  f >> v;
  return v;
}

struct Link {
  int64_t bytes = 0, packets = 0;
  static Link now() {
    return {counter("tx_bytes") + counter("rx_bytes"),
            counter("tx_packets") + counter("rx_packets")};
  }
};

// One warm-up, then `reps` timed calls of `call`: prints the median and the link traffic per
// call divided by `steps` (1, or the pushes of a stream).
void measure(const std::string& name, int reps, int64_t steps, const std::function<void()>& call) {
  call();
  std::vector<double> ms;
  const Link before = Link::now();
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  const Link after = Link::now();
  std::sort(ms.begin(), ms.end());
  if (mesh_detail::mpi_world_rank() == 0)
    std::printf(
        "SCALE %s ranks=%d median_ms=%.1f bytes_per_step=%lld packets_per_step=%lld "
        "steps=%lld\n",
        name.c_str(), mesh_detail::mpi_world_size(), ms[ms.size() / 2],
        static_cast<long long>((after.bytes - before.bytes) / (reps * steps)),
        static_cast<long long>((after.packets - before.packets) / (reps * steps)),
        static_cast<long long>(steps));
  std::fflush(stdout);
}

RunOptions run_on(int threads) {
  RunOptions r;
  const int n = mesh_detail::mpi_world_size();
  r.mesh = "1x" + std::to_string(n);
  r.backend = n > 1 ? Backend::mpi : Backend::local;
  r.threads = threads;
  return r;
}

std::vector<int> thread_counts() {
  return mesh_detail::mpi_world_size() > 1 ? std::vector<int>{1} : std::vector<int>{1, 2};
}

TEST(MpiScaleBench, Table) {
  if (!bench_dir()) GTEST_SKIP() << "tools/bench_scale.sh sets MESHNN_SCALE_BENCH_DIR";
  const std::string dir = bench_dir();
  const int reps = 3;
  {
    const AudioModel ltx = AudioModel::load(dir + "/ltx23.safetensors");
    const Tensor z = test::random_normal({1, 8, 50, 16}, 1);  // 2 s at 25 latent frames / s
    for (int t : thread_counts())
      measure("ltx23_2s_time_shard threads=" + std::to_string(t), reps, 1,
              [&] { (void)ltx.run(z, run_on(t)); });
  }
  {
    const AudioModel h3 = AudioModel::load(dir + "/h3");
    const Tensor z = test::random_normal({2, h3.input_spec().shape[1], 80}, 2);  // 2 s stereo
    for (int t : thread_counts())
      measure("h3_2s_stereo_split threads=" + std::to_string(t), reps, 1,
              [&] { (void)h3.run(z, run_on(t)); });
  }
  {
    const AudioModel voc = AudioModel::load(dir + "/bigvgan");
    const int64_t T = 188, push = 32;  // 2 s of 24 kHz mel (hop 256), pushes of 32 frames
    const Tensor mel = test::random_normal({1, voc.input_spec().shape[1], T}, 3);
    for (int t : thread_counts())
      measure("bigvgan_2s_time_shard threads=" + std::to_string(t), reps, 1,
              [&] { (void)voc.run(mel, run_on(t)); });
    for (int t : thread_counts()) {
      StreamOptions o;
      o.mesh = run_on(t).mesh;
      o.backend = run_on(t).backend;
      o.threads = t;
      AudioStream s = voc.stream(o);
      measure("bigvgan_2s_stream_pipeline threads=" + std::to_string(t), reps,
              (T + push - 1) / push, [&] {
                for (int64_t a = 0; a < T; a += push)
                  (void)s.push(mel.narrow(2, a, std::min(push, T - a)));
                (void)s.flush();
              });
    }
  }
  EXPECT_TRUE(test::mpi_all_true(true));
}

}  // namespace
}  // namespace meshnn
