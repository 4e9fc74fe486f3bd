#include "io/json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "io/io_test_util.h"

namespace meshnn::test {
namespace {

TEST(Json, ParsesConfig) {
  const auto j = io::parse_json(R"({"sampling_rate": 16000, "upsample_rates": [4, 4, 2]})", "cfg");
  EXPECT_EQ(j.at("sampling_rate").get<int>(), 16000);
  EXPECT_EQ(j.at("upsample_rates").size(), 3u);
}

TEST(Json, ErrorHasLineColumnAndOffset) {
  try {
    io::parse_json("{\n  \"a\": 1,\n  \"b\": ]\n}", "config.json");
    FAIL() << "no throw";
  } catch (const FormatError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("config.json: at line 3, column 8 (byte offset 19)"), std::string::npos)
        << msg;
  }
}

TEST(Json, NumberOverflowIsFormatError) {
  EXPECT_THROW(io::parse_json("[1e999]", "cfg.json"), FormatError);
}

TEST(Json, ReadFileNamesPath) {
  const std::string path = scratch_dir() + "/config.json";
  { std::ofstream(path) << "{\"a\": [1, 2,"; }
  EXPECT_TRUE(throws_format([&] { io::read_json_file(path); }, path, "line 1"));
  { std::ofstream(path) << "{\"a\": [1, 2]}"; }
  EXPECT_EQ(io::read_json_file(path).at("a").at(1).get<int>(), 2);
  EXPECT_THROW(io::read_json_file(path + ".missing"), BackendError);
}

}  // namespace
}  // namespace meshnn::test
