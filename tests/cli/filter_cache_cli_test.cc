// The filter cache from the command line (the real binary): two one-shot `audio-decode` processes
// with the cache in a folder of the test's write the same WAV bytes as one with it off, the
// second mapping what the first stored; `meshnn cache` lists the entries and `clear` removes
// them; `meshnn info` names the folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli_run.h"
#include "support/golden.h"
#include "support/scratch_dir.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

size_t entries(const fs::path& dir) {
  if (!fs::exists(dir)) return 0;
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".mfc";
  return n;
}

TEST(FilterCacheCli, OneShotDecodesShareTheCacheAndWriteTheSameBytes) {
  if (!fs::exists(test::meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
  test::ScratchDir scratch;
  const std::string folder = scratch.at("cache");
  // Every layer of the small fixture is cached (its layers are under the default 64 KiB).
  const std::string on = "MESHNN_FILTER_CACHE=" + folder + " MESHNN_FILTER_CACHE_MIN_KB=0 ";
  auto decode = [&](const std::string& env, const std::string& out) {
    return test::shell(env + test::meshnn_binary() + " audio-decode --quiet --checkpoint " +
                       test::fixture_path("ltx23_small.safetensors") + " --latent " +
                       test::fixture_path("ltx23_small_latent.npy") + " --out " + out);
  };
  const test::CliRun off = decode("MESHNN_FILTER_CACHE=off ", scratch.at("off.wav"));
  ASSERT_EQ(off.code, 0) << off.output;
  EXPECT_FALSE(fs::exists(folder));
  const test::CliRun cold = decode(on, scratch.at("cold.wav"));
  ASSERT_EQ(cold.code, 0) << cold.output;
  const fs::path v1 = fs::path(folder) / "v1";
  const size_t stored = entries(v1);
  EXPECT_GT(stored, 0u);
  const auto before = fs::last_write_time(*fs::directory_iterator(v1));
  const test::CliRun warm = decode(on, scratch.at("warm.wav"));
  ASSERT_EQ(warm.code, 0) << warm.output;
  EXPECT_EQ(entries(v1), stored);
  EXPECT_EQ(fs::last_write_time(*fs::directory_iterator(v1)), before);  // read, not rewritten
  const std::string ref = slurp(scratch.at("off.wav"));
  EXPECT_FALSE(ref.empty());
  EXPECT_EQ(slurp(scratch.at("cold.wav")), ref);
  EXPECT_EQ(slurp(scratch.at("warm.wav")), ref);

  const test::CliRun info = test::shell(on + test::meshnn_binary() + " info");
  EXPECT_NE(info.output.find("filter cache: " + v1.string()), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("memory:     mapped (MESHNN_FILTER_MEMORY)"), std::string::npos)
      << info.output;
  const test::CliRun background =
      test::shell(on + "MESHNN_FILTER_MEMORY=background " + test::meshnn_binary() + " info");
  EXPECT_NE(background.output.find("memory:     background"), std::string::npos)
      << background.output;
  const test::CliRun list = test::shell(on + test::meshnn_binary() + " cache list");
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find(std::to_string(stored) + " entries"), std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("winograd1d F("), std::string::npos) << list.output;
  const test::CliRun clear = test::shell(on + test::meshnn_binary() + " cache clear");
  ASSERT_EQ(clear.code, 0) << clear.output;
  EXPECT_EQ(entries(v1), 0u);
  const test::CliRun off_list =
      test::shell("MESHNN_FILTER_CACHE=off " + test::meshnn_binary() + " cache");
  EXPECT_EQ(off_list.code, 0);
  EXPECT_NE(off_list.output.find("filter cache: off"), std::string::npos) << off_list.output;
}

}  // namespace
}  // namespace meshnn
