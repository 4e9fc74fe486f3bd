// `meshnn vocode --stream` and `meshnn audio-decode --stream` (the real binary): the streamed WAV
// equals the one-shot WAV to f32 rounding whether the frames come from a .npy or as raw float32 on
// stdin, raw PCM goes to stdout with --out -, and the latency / real-time-factor line is printed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "io/io_test_util.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"
#include "support/cli_run.h"
#include "support/golden.h"
#include "support/stream_test_util.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

using test::meshnn_binary;
constexpr auto sh = &test::shell;  // exit status and stdout + stderr of a command line

// (F, C) frames as raw float32 little-endian (this machine is little-endian).
void write_raw(const std::string& path, const Tensor& frames) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(frames.raw()), static_cast<std::streamsize>(frames.nbytes()));
}

class StreamCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
    dir = test::scratch_dir();
  }
  std::string dir;
};

TEST_F(StreamCli, VocodeStreamEqualsOneShotFromNpyAndStdin) {
  const std::string ckpt = test::fixture_path("bigvgan_v2_24k_small.safetensors");
  const int64_t M = 100, T = 40;
  const Tensor mel = test::random_rows({M, T}, 81, -8.f, 1.f);
  io::save_npy(dir + "/mel.npy", mel);
  // Frame t = mel[:, t]: the transpose, row after row.
  Tensor frames = Tensor::empty({T, M});
  for (int64_t t = 0; t < T; ++t)
    for (int64_t m = 0; m < M; ++m) frames.data<float>()[t * M + m] = mel.data<float>()[m * T + t];
  write_raw(dir + "/mel.raw", frames);
  const std::string base = meshnn_binary() + " vocode --checkpoint " + ckpt;
  auto r = sh(base + " --mel " + dir + "/mel.npy --out " + dir + "/one.wav");
  ASSERT_EQ(r.code, 0) << r.output;
  r = sh(base + " --mel " + dir + "/mel.npy --stream --push-frames 7 --out " + dir + "/npy.wav");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("first audio"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("real-time factor"), std::string::npos) << r.output;
  r = sh("cat " + dir + "/mel.raw | " + base + " --frames-from - --stream --push-frames 3 --out " +
         dir + "/stdin.wav");
  ASSERT_EQ(r.code, 0) << r.output;
  // Raw PCM on stdout: s16le, one channel.
  r = sh(base + " --mel " + dir + "/mel.npy --stream --quiet --out - > " + dir + "/out.pcm");
  ASSERT_EQ(r.code, 0) << r.output;
  const io::WavAudio one = io::read_wav(dir + "/one.wav");
  for (const char* f : {"/npy.wav", "/stdin.wav"})
    EXPECT_LE(test::max_abs_diff(io::read_wav(dir + f).samples, one.samples), 4e-6) << f;
  EXPECT_EQ(fs::file_size(dir + "/out.pcm"), static_cast<uintmax_t>(one.samples.numel() * 2));
}

TEST_F(StreamCli, AudioDecodeStreamEqualsOneShotOnOneDeviceAndPipeline) {
  const std::string ckpt = test::fixture_path("ltx23_small.safetensors");
  const int64_t T = 6;
  const Tensor latent = test::random_rows({1, 8, T, 16}, 83, -2.f, 2.f);
  io::save_npy(dir + "/lat.npy", latent);
  const std::string base = meshnn_binary() + " audio-decode --checkpoint " + ckpt;
  auto r = sh(base + " --latent " + dir + "/lat.npy --mesh 1x1 --quiet --out " + dir + "/one.wav");
  ASSERT_EQ(r.code, 0) << r.output;
  const io::WavAudio one = io::read_wav(dir + "/one.wav");
  for (const char* mesh : {"1x1", "1x2"}) {
    const std::string out = dir + "/st" + mesh + ".wav";
    r = sh(base + " --latent " + dir + "/lat.npy --stream --push-frames 2 --mesh " + mesh +
           " --out " + out);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_LE(test::max_abs_diff(io::read_wav(out).samples, one.samples), 4e-6) << mesh;
  }
  // Stream-only options without --stream are refused.
  r = sh(base + " --latent " + dir + "/lat.npy --out -");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("need --stream"), std::string::npos) << r.output;
}

// MESHNN_PROFILE=layers times a stream's convolutions too: one line per conv layer, one call per
// push that gave it rows, and the same direct FLOPs as the one-shot run (every output row is
// computed once either way).
TEST_F(StreamCli, LayerProfileCoversStreamPushes) {
  const std::string ckpt = test::fixture_path("bigvgan_v2_24k_small.safetensors");
  io::save_npy(dir + "/mel.npy", test::random_rows({100, 48}, 85, -8.f, 1.f));
  const std::string base = "MESHNN_PROFILE=layers " + meshnn_binary() + " vocode --checkpoint " +
                           ckpt + " --mel " + dir + "/mel.npy --quiet";
  // The conv_pre line's calls and MFLOP (the GFLOP column × 1000), {-1, -1} when absent.
  const auto conv_pre = [](const std::string& out) {
    const size_t at = out.find("\n  conv_pre ");
    if (at == std::string::npos) return std::pair<long, double>{-1, -1};
    double seconds = 0, gflop = 0;
    long calls = 0;
    std::sscanf(out.c_str() + at, "\n  conv_pre %lf s %ld calls %lf GFLOP", &seconds, &calls,
                &gflop);
    return std::pair<long, double>{calls, gflop * 1e3};
  };
  auto r = sh(base + " --out " + dir + "/one.wav");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto one = conv_pre(r.output);
  r = sh(base + " --stream --push-frames 8 --out " + dir + "/st.wav");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto st = conv_pre(r.output);
  EXPECT_EQ(one.first, 1) << r.output;
  EXPECT_GE(st.first, 6) << r.output;  // 48 frames in pushes of 8, and the flush
  EXPECT_GT(one.second, 0) << r.output;
  EXPECT_NEAR(st.second, one.second, 1e-3 * one.second + 0.11) << r.output;
}

}  // namespace
}  // namespace meshnn
