// `meshnn bench SUB ...` executes meshnn-bench (bench/e2e) found next to meshnn, then on $PATH,
// with the arguments after `bench` and a --comm-timeout given before it; a missing meshnn-bench is
// a runtime error (exit 1) naming where it looked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli_run.h"
#include "support/golden.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

std::string meshnn_bench_binary() { return std::string(MESHNN_BINARY_DIR) + "/meshnn-bench"; }

// A temp folder holding a copy of the meshnn binary alone; removed with the object.
struct LoneMeshnn {
  fs::path dir = fs::temp_directory_path() / ("meshnn-bench-exec-" + std::to_string(getpid()));
  LoneMeshnn() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(test::meshnn_binary(), dir / "meshnn");
  }
  ~LoneMeshnn() { fs::remove_all(dir); }
  std::string meshnn() const { return (dir / "meshnn").string(); }
};

TEST(BenchExec, HelpReachesMeshnnBench) {
  if (!fs::exists(test::meshnn_binary()) || !fs::exists(meshnn_bench_binary()))
    GTEST_SKIP() << "meshnn or meshnn-bench not built";
  const test::CliRun r = test::run_meshnn("bench --help");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Usage: meshnn-bench"), std::string::npos) << r.output;
  for (const char* sub : {"audio", "ccl", "first-call", "precision", "scale", "stream", "vocode"})
    EXPECT_NE(r.output.find(std::string("\n  ") + sub + " "), std::string::npos) << sub;
  // A subcommand's own help and its option checks come from meshnn-bench.
  const test::CliRun sub = test::run_meshnn("--comm-timeout 5 bench ccl --help");
  EXPECT_EQ(sub.code, 0) << sub.output;
  EXPECT_NE(sub.output.find("meshnn-bench ccl"), std::string::npos) << sub.output;
  const test::CliRun bad = test::run_meshnn("bench ccl --trials 0");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--trials"), std::string::npos) << bad.output;
}

TEST(BenchExec, MissingMeshnnBenchNamesWhereItLooked) {
  if (!fs::exists(test::meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
  const LoneMeshnn lone;
  const test::CliRun r =
      test::shell("PATH=/nonexistent-meshnn-path " + lone.meshnn() + " bench ccl --trials 1");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("meshnn-bench program, which was not found"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find((lone.dir / "meshnn-bench").string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/nonexistent-meshnn-path"), std::string::npos) << r.output;
}

// A stand-in meshnn-bench next to the copy prints the arguments it was given.
TEST(BenchExec, PassesTheArgumentsAndCommTimeout) {
  if (!fs::exists(test::meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
  const LoneMeshnn lone;
  const fs::path fake = lone.dir / "meshnn-bench";
  std::ofstream(fake) << "#!/bin/sh\nprintf 'ARGS[%s]' \"$@\"\n";
  fs::permissions(fake, fs::perms::owner_all);
  const test::CliRun r =
      test::shell(lone.meshnn() + " --comm-timeout 7.5 bench audio --seconds 1 --help");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "ARGS[--comm-timeout]ARGS[7.5]ARGS[audio]ARGS[--seconds]ARGS[1]ARGS[--help]");
  const test::CliRun eq = test::shell(lone.meshnn() + " --comm-timeout=0 bench ccl --trials 3");
  EXPECT_EQ(eq.output, "ARGS[--comm-timeout]ARGS[0]ARGS[ccl]ARGS[--trials]ARGS[3]");
  const test::CliRun plain = test::shell(lone.meshnn() + " bench stream --chunks 8");
  EXPECT_EQ(plain.output, "ARGS[stream]ARGS[--chunks]ARGS[8]");
  // meshnn still checks its own option before handing over.
  const test::CliRun neg = test::shell(lone.meshnn() + " --comm-timeout -1 bench ccl");
  EXPECT_EQ(neg.code, 2) << neg.output;
  EXPECT_EQ(neg.output.find("ARGS["), std::string::npos) << neg.output;
}

// meshnn-bench takes the global option itself (what `meshnn --comm-timeout S bench` passes on).
TEST(BenchExec, MeshnnBenchTakesCommTimeout) {
  if (!fs::exists(meshnn_bench_binary())) GTEST_SKIP() << "meshnn-bench not built";
  const test::CliRun ok = test::shell(meshnn_bench_binary() + " --comm-timeout 30 scale --help");
  EXPECT_EQ(ok.code, 0) << ok.output;
  const test::CliRun neg = test::shell(meshnn_bench_binary() + " --comm-timeout -1 scale --help");
  EXPECT_EQ(neg.code, 2) << neg.output;
  EXPECT_NE(neg.output.find("--comm-timeout"), std::string::npos) << neg.output;
}

// `bench first-call` times a MiniMax-H3 folder's decoder and encoder (issue 34: a one-shot H3
// process against its steady call): the tiny fixture, both directions, the report complete and
// call 1's output the steady one's.
TEST(BenchExec, FirstCallTimesMiniMaxH3BothWays) {
  if (!fs::exists(test::meshnn_binary()) || !fs::exists(meshnn_bench_binary()))
    GTEST_SKIP() << "meshnn or meshnn-bench not built";
  const std::string folder = test::fixture_path("minimax_h3_tiny");
  for (const std::string model : {"h3", "h3-encode"}) {
    const test::CliRun r = test::run_meshnn("bench first-call --model " + model + " --checkpoint " +
                                            folder + " --seconds 0.5 --calls 3");
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find(model == "h3" ? "decoder, stereo latent" : "encoder, stereo wave"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("(0.50 s of audio)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("call 1 output equals the steady one"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("x steady"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace meshnn
