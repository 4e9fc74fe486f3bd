// The meshnn command line on bad inputs (issue 15): every error below must come before any weight
// is loaded or any decode runs — the tests run the real binary and need the answer in seconds —
// with exit code 1 and a message naming the problem; outputs never destroy inputs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "io/io_test_util.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "support/cli_run.h"
#include "support/golden.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

using test::CliRun;
using test::meshnn_binary;
constexpr auto run = &test::run_meshnn;

#define EXPECT_FAILS_WITH(r, needle)                                     \
  do {                                                                   \
    EXPECT_EQ((r).code, 1) << (r).output;                                \
    EXPECT_NE((r).output.find(needle), std::string::npos) << (r).output; \
  } while (0)

class CliPreflight : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
    dir = test::scratch_dir();
    ckpt = test::fixture_path("ltx23_small.safetensors");
    latent = dir + "/latent.npy";
    io::save_npy(latent, test::random_tensor({1, 8, 5, 16}, DType::f32, 1));
  }
  std::string dir, ckpt, latent;
  std::string decode(const std::string& extra) {
    return "audio-decode --checkpoint " + ckpt + " --latent " + latent + " " + extra;
  }
};

TEST_F(CliPreflight, OutputThatIsAnInputIsRefusedAndTheInputKept) {
  const Tensor original = io::load_npy(latent);
  EXPECT_FAILS_WITH(run(decode("--out " + latent)), "same file as the input");
  fs::create_symlink(latent, dir + "/alias.wav");
  EXPECT_FAILS_WITH(run(decode("--out " + dir + "/alias.wav")), "same file as the input");
  EXPECT_TRUE(test::same_bytes(io::load_npy(latent), original));
  const std::string copy = dir + "/ckpt.safetensors";
  fs::copy_file(ckpt, copy);
  EXPECT_FAILS_WITH(
      run("audio-decode --checkpoint " + copy + " --latent " + latent + " --out " + copy),
      "same file as the input");
}

TEST_F(CliPreflight, BadArgumentsFailBeforeTheWork) {
  EXPECT_FAILS_WITH(run(decode("--out " + dir + "/no/such/dir/x.wav")), "does not exist");
  // Counts out of their range are usage errors (exit 2) naming the option (issue 23, item 4).
  for (const char* bad : {"100000", "-2", "1.5", "true"}) {
    const CliRun r = run(decode(std::string("--threads ") + bad + " --out " + dir + "/x.wav"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--threads"), std::string::npos) << r.output;
  }
  EXPECT_FAILS_WITH(run(decode("--mesh 1x8 --out " + dir + "/x.wav")),
                    "cannot be split over 8 devices");
  io::save_npy(latent, test::random_tensor({2, 8, 5, 16}, DType::f32, 2));
  EXPECT_FAILS_WITH(run(decode("--out " + dir + "/x.wav")), "batch of 2 latents");
  io::save_npy(latent, test::random_tensor({1, 8, 5, 16}, DType::f16, 3));
  EXPECT_FAILS_WITH(run(decode("--out " + dir + "/x.wav")), "must be float32 or float64, got f16");
  const CliRun demo = run("demo --seconds 0.001 --out " + dir + "/d.wav");
  EXPECT_EQ(demo.code, 2) << demo.output;  // a usage error, at parse time
  EXPECT_NE(demo.output.find("--seconds: '0.001'"), std::string::npos) << demo.output;
  EXPECT_FALSE(fs::exists(dir + "/d.wav"));
  EXPECT_FALSE(fs::exists(dir + "/x.wav"));
}

TEST_F(CliPreflight, VocodeMelFollowsTheAudioDecodeDtypeRule) {
  const std::string mel = dir + "/mel.npy";
  io::save_npy(mel, test::random_tensor({100, 20}, DType::f16, 4));
  EXPECT_FAILS_WITH(
      run("vocode --checkpoint " + test::fixture_path("bigvgan_v2_24k_small.safetensors") +
          " --mel " + mel + " --out " + dir + "/v.wav"),
      "must be float32 or float64, got f16");
  io::save_npy(mel, test::random_tensor({100, 20}, DType::i32, 5));
  EXPECT_FAILS_WITH(
      run("vocode --checkpoint " + test::fixture_path("bigvgan_v2_24k_small.safetensors") +
          " --mel " + mel + " --out " + dir + "/v.wav"),
      "got i32");
}

TEST_F(CliPreflight, BigVganSamplingRateMustBePositive) {
  const std::string cfg = dir + "/config.json";
  const auto file =
      io::SafetensorsFile::open(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  std::string text = file.metadata().at("config");
  const std::string from = "\"sampling_rate\":";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << text;
  const size_t end = text.find_first_of(",}", at);
  text.replace(at, end - at, "\"sampling_rate\": 0");
  std::ofstream(cfg) << text;
  io::save_npy(dir + "/mel.npy", test::random_tensor({100, 20}, DType::f32, 6));
  EXPECT_FAILS_WITH(
      run("vocode --checkpoint " + test::fixture_path("bigvgan_v2_24k_small.safetensors") +
          " --config " + cfg + " --mel " + dir + "/mel.npy --out " + dir + "/v.wav"),
      "sampling_rate must be positive");
}

TEST_F(CliPreflight, LongLatentSwitchesToChunkedDecodeAndSaysSo) {
  io::save_npy(latent, test::random_tensor({1, 8, 251, 16}, DType::f32, 7));
  // --threads 1 --quiet is not given: the notice must appear; the decode of the small fixture
  // model is quick.
  const CliRun r = run(decode("--threads 1 --out " + dir + "/long.wav"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("decoding in chunks of 125 frames to bound memory"), std::string::npos)
      << r.output;
  EXPECT_TRUE(fs::exists(dir + "/long.wav"));
}

}  // namespace
}  // namespace meshnn
