// `meshnn serve ARGS` runs the meshnn-serve program (src/cli/exec_program.cc): its help is
// meshnn-serve's, the arguments and a --comm-timeout given before `serve` reach it unchanged, a
// missing meshnn-serve is a clear error naming where it was looked for, and the meshnn binary
// carries no server (Boost) code. Runs the real binaries.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/cli_run.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

std::string serve_binary() { return std::string(MESHNN_BINARY_DIR) + "/meshnn-serve"; }

// The option lines of a CLI11 help text (from "Options:" on), without the usage line that names
// the program.
std::vector<std::string> option_lines(const std::string& help) {
  std::vector<std::string> out;
  const size_t from = help.find("Options:");
  if (from == std::string::npos) return out;
  size_t i = from;
  while (i < help.size()) {
    const size_t end = help.find('\n', i);
    const std::string line = help.substr(i, end == std::string::npos ? end : end - i);
    if (!line.empty()) out.push_back(line);
    if (end == std::string::npos) break;
    i = end + 1;
  }
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The meshnn binary alone in a fresh folder (its RPATH still finds the library), to control what
// lies beside it.
std::string lone_meshnn(const std::string& dir) {
  const std::string copy = dir + "/meshnn";
  fs::copy_file(test::meshnn_binary(), copy);
  return copy;
}

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(test::meshnn_binary()) || !fs::exists(serve_binary()))
      GTEST_SKIP() << "meshnn or meshnn-serve not built";
  }
};

TEST_F(ServeCli, HelpIsMeshnnServes) {
  const test::CliRun via_cli = test::run_meshnn("serve --help");
  const test::CliRun direct = test::shell(serve_binary() + " --help");
  ASSERT_EQ(via_cli.code, 0) << via_cli.output;
  ASSERT_EQ(direct.code, 0) << direct.output;
  const std::vector<std::string> a = option_lines(via_cli.output), b = option_lines(direct.output);
  EXPECT_EQ(a, b) << via_cli.output << "\n---\n" << direct.output;
  // The server's options, not an empty subcommand's: --help alone would match too.
  for (const char* opt : {"--model", "--port", "--drain-timeout", "--backend", "--comm-timeout"})
    EXPECT_NE(direct.output.find(opt), std::string::npos) << opt << "\n" << direct.output;
}

TEST_F(ServeCli, UsageErrorsAreMeshnnServesWithTheSameCodes) {
  const test::CliRun unknown = test::run_meshnn("serve --model v=x --bogus");
  EXPECT_EQ(unknown.code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("meshnn serve --bogus: unknown option"), std::string::npos)
      << unknown.output;
  const test::CliRun missing = test::run_meshnn("serve --port 0");
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_NE(missing.output.find("--model is required"), std::string::npos) << missing.output;
  const test::CliRun bad_timeout = test::shell(serve_binary() + " --comm-timeout -2 --model v=x");
  EXPECT_EQ(bad_timeout.code, 2) << bad_timeout.output;
  EXPECT_NE(bad_timeout.output.find("--comm-timeout"), std::string::npos) << bad_timeout.output;
}

// A stand-in meshnn-serve beside the copied meshnn writes the arguments it got, one per line.
TEST_F(ServeCli, ArgumentsAndCommTimeoutReachTheServerUnchanged) {
  const std::string dir = test::scratch_dir(), meshnn = lone_meshnn(dir);
  const std::string got = dir + "/args.txt", fake = dir + "/meshnn-serve";
  std::ofstream(fake) << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " << got
                      << "\n";
  fs::permissions(fake, fs::perms::owner_all);
  const test::CliRun r = test::shell(meshnn +
                                     " --comm-timeout 2.5 serve --model 'v=a b.safetensors'"
                                     " --help --port=0 -- tail");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_all(got),
            "--comm-timeout\n2.5\n--model\nv=a b.safetensors\n--help\n--port=0\n--\ntail\n");
  // Without --comm-timeout nothing is added; a bad one is meshnn's usage error before any exec.
  ASSERT_EQ(test::shell(meshnn + " serve --port 1").code, 0);
  EXPECT_EQ(read_all(got), "--port\n1\n");
  fs::remove(got);
  const test::CliRun bad = test::shell(meshnn + " --comm-timeout -1 serve --port 1");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_FALSE(fs::exists(got));
}

TEST_F(ServeCli, MissingServerIsAClearError) {
  const std::string dir = test::scratch_dir(), meshnn = lone_meshnn(dir);
  const std::string empty = dir + "/empty";
  fs::create_directories(empty);
  const test::CliRun r = test::shell("PATH=" + empty + " " + meshnn + " serve --help");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("meshnn-serve program, which was not found"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("looked in " + dir + "/meshnn-serve, " + empty + "/meshnn-serve"),
            std::string::npos)
      << r.output;
}

// The CLI compiles no server source: the Boost.Asio / Beast code is in meshnn-serve only.
TEST_F(ServeCli, MeshnnCarriesNoServerCode) {
  const std::string cli = read_all(test::meshnn_binary()), server = read_all(serve_binary());
  for (const char* mangled : {"5boost4asio", "5boost5beast"}) {
    EXPECT_EQ(cli.find(mangled), std::string::npos) << mangled << " in meshnn";
    EXPECT_NE(server.find(mangled), std::string::npos) << mangled << " not in meshnn-serve";
  }
}

}  // namespace
}  // namespace meshnn
