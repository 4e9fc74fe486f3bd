// The one strict config reader (io/config_reader.h), and every model config read through it: each
// refuses a float where an integer belongs (16.7 and 16.0), a duplicate key and an unknown key
// (all unknown keys in one error, naming the file).
#include "io/config_reader.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/common/audio_config.h"
#include "models/minimax_h3/config.h"
#include "support/expect_error.h"
#include "support/golden.h"

namespace meshnn::io {

using meshnn::test::expect_error;
namespace {

using nlohmann::json;

TEST(ConfigReader, TypedFields) {
  const json j = parse_config_json(
      R"({"i": 16, "d": 0.5, "di": 3, "b": true, "s": "x", "l": [[1, 2], [3]], "n": null})", "t");
  ConfigReader r(j, "f.json");
  EXPECT_EQ(r.get<int>("i"), 16);
  EXPECT_EQ(r.get<int64_t>("i"), 16);
  EXPECT_DOUBLE_EQ(r.get<double>("d"), 0.5);
  EXPECT_DOUBLE_EQ(r.get<double>("di"), 3.0);  // an integer literal is a fine double
  EXPECT_TRUE(r.get<bool>("b"));
  EXPECT_EQ(r.get<std::string>("s"), "x");
  EXPECT_EQ(r.get<std::vector<std::vector<int>>>("l"),
            (std::vector<std::vector<int>>{{1, 2}, {3}}));
  EXPECT_EQ(r.get_or<int>("n", 7), 7);  // null = absent
  EXPECT_EQ(r.get_or<int>("absent", 9), 9);
  EXPECT_NO_THROW(r.finish());
  expect_error<InvalidArgument>([&] { r.get<int>("absent"); }, {"f.json", "missing", "'absent'"});
}

TEST(ConfigReader, IntegersComeOnlyFromIntegerLiterals) {
  for (const char* bad : {"16.7", "16.0", "1e3", "\"16\"", "true"}) {
    const json j = parse_config_json(std::string("{\"k\": ") + bad + "}", "t");
    ConfigReader r(j, "f.json");
    expect_error<InvalidArgument>([&] { r.get<int>("k"); },
                                  {"f.json", "'k'", "must be an integer"});
  }
  const json j = parse_config_json(R"({"big": 1180591620717411303424, "wide": 4294967296,
                                       "neg": -1})",
                                   "t");
  ConfigReader r(j, "f.json");
  expect_error<InvalidArgument>([&] { r.get<int64_t>("big"); },
                                {"1180591620717411303424", "out of range"});
  expect_error<InvalidArgument>([&] { r.get<int>("wide"); }, {"4294967296", "out of range"});
  EXPECT_EQ(r.get<int64_t>("wide"), int64_t{4294967296});
  expect_error<InvalidArgument>([&] { r.get<uint32_t>("neg"); }, {"-1", "out of range"});
  expect_error<InvalidArgument>([&] { r.get<bool>("neg"); }, {"true or false"});
  expect_error<InvalidArgument>([&] { r.get<std::string>("neg"); }, {"a string"});
}

TEST(ConfigReader, EveryUnknownKeyIsReportedAtOnce) {
  const json j =
      parse_config_json(R"({"a": 1, "x": 2, "_meta": 0, "sec": {"b": 1, "y": 2}, "z": 3})", "t");
  ConfigReader r(j, "model/config.json");
  r.get<int>("a");
  r.allow_prefix("_");
  r.child("sec").get<int>("b");
  expect_error<InvalidArgument>(
      [&] { r.finish(); },
      {"model/config.json", "3 unknown config fields", "'x'", "'y' in 'sec'", "'z'"});
  r.allow({"x", "z"});
  expect_error<InvalidArgument>([&] { r.finish(); }, {"unknown config field 'y' in 'sec'"});
  r.child("sec").allow_any();
  EXPECT_NO_THROW(r.finish());
}

TEST(ConfigReader, DuplicateKeysAreRefusedByTheParser) {
  expect_error<FormatError>([] { parse_config_json(R"({"a": {"k": 1, "k": 2}})", "c.json"); },
                            {"c.json", "duplicate key 'k' in 'a'"});
}

// ---- every model config ------------------------------------------------------------------------

json bigvgan_config() {
  return {{"resblock", "1"},
          {"num_mels", 80},
          {"upsample_initial_channel", 64},
          {"upsample_rates", {4, 4}},
          {"upsample_kernel_sizes", {8, 8}},
          {"resblock_kernel_sizes", {3}},
          {"resblock_dilation_sizes", {{1, 3}}},
          {"sampling_rate", 16000},
          {"n_fft", 64},
          {"hop_size", 16},
          {"win_size", 64},
          {"fmin", 0},
          {"fmax", 8000},
          {"num_gpus", 0},  // training fields of a released config.json are accepted
          {"cqtd_filters", 128},
          {"dist_config", {{"world_size", 1}}}};
}

// Text → strict JSON → the model's reader, as a checkpoint or config.json is read.
using Reader = std::function<void(const std::string&)>;

struct ModelConfig {
  const char* name;
  Reader read;
  std::string valid;    // a config text the reader accepts
  std::string int_key;  // an integer field (top level of `valid`)
};

std::vector<ModelConfig> model_configs() {
  std::vector<ModelConfig> out;
  out.push_back({"LTX",
                 [](const std::string& t) {
                   models::parse_ltx_audio_config(parse_config_json(t, "ltx"), "ltx.safetensors");
                 },
                 models::ltx23_reference_config().dump(), ""});
  out.push_back({"BigVGAN",
                 [](const std::string& t) {
                   models::parse_bigvgan_config(parse_config_json(t, "config.json"), "config.json");
                 },
                 bigvgan_config().dump(), "upsample_initial_channel"});
  out.push_back({"MiniMax-H3",
                 [](const std::string& t) {
                   models::minimax_h3::parse_config(parse_config_json(t, "config.json"),
                                                    "config.json");
                 },
                 read_config_json_file(test::fixture_path("minimax_h3_tiny/config.json")).dump(),
                 "encoder_dim"});
  for (gr00t::Version v : {gr00t::Version::n1_5, gr00t::Version::n1_6, gr00t::Version::n1_7}) {
    const std::string adapter = gr00t::Config::defaults(v).to_json();
    out.push_back({"GR00T adapter", [v](const std::string& t) { gr00t::Config::from_json(t, v); },
                   adapter, "hidden_size"});
    json head = json::parse(adapter);
    head.update(json::parse(gr00t::ActionHeadConfig::defaults(v).to_json()));
    out.push_back({"GR00T head",
                   [v](const std::string& t) { gr00t::ActionHeadConfig::from_json(t, v); },
                   head.dump(), "action_horizon"});
  }
  return out;
}

TEST(ModelConfigs, ValidConfigsParse) {
  for (const ModelConfig& m : model_configs()) EXPECT_NO_THROW(m.read(m.valid)) << m.name;
}

TEST(ModelConfigs, AFloatForAnIntegerIsRefused) {
  for (const ModelConfig& m : model_configs()) {
    if (m.int_key.empty()) continue;  // LTX: nested fields, covered in config_validation_test
    for (const char* bad : {"16.7", "16.0"}) {
      json j = json::parse(m.valid);
      ASSERT_TRUE(j.contains(m.int_key)) << m.name;
      std::string text = j.dump();
      const std::string from = "\"" + m.int_key + "\":" + j[m.int_key].dump();
      ASSERT_NE(text.find(from), std::string::npos) << m.name << " " << text;
      text.replace(text.find(from), from.size(), "\"" + m.int_key + "\":" + bad);
      SCOPED_TRACE(std::string(m.name) + " " + m.int_key + " = " + bad);
      expect_error<InvalidArgument>([&] { m.read(text); }, {m.int_key, "must be an integer", bad});
    }
  }
  // The action head's horizon in particular (it was cast to 16 before the reliability round).
  expect_error<InvalidArgument>(
      [] {
        gr00t::ActionHeadConfig::from_json(R"({"action_horizon": 16.7})", gr00t::Version::n1_5);
      },
      {"action_horizon", "must be an integer", "16.7"});
  expect_error<InvalidArgument>(
      [] {
        gr00t::ActionHeadConfig::from_json(R"({"action_head_cfg": {"action_horizon": 16.0}})",
                                           gr00t::Version::n1_6);
      },
      {"action_horizon", "must be an integer", "16.0"});
}

TEST(ModelConfigs, ADuplicateKeyIsRefused) {
  for (const ModelConfig& m : model_configs()) {
    std::string text = m.valid;
    ASSERT_EQ(text.front(), '{');
    // The first key again, at the end of the top-level object.
    const json j = json::parse(text);
    const std::string key = j.begin().key();
    text.insert(text.size() - 1, ",\"" + key + "\":" + j.begin().value().dump());
    SCOPED_TRACE(m.name);
    expect_error<FormatError>([&] { m.read(text); }, {"duplicate key '" + key + "'"});
  }
}

TEST(ModelConfigs, UnknownKeysAreRefusedAllAtOnce) {
  for (const ModelConfig& m : model_configs()) {
    json j = json::parse(m.valid);
    j["meshnn_unknown_a"] = 1;
    j["meshnn_unknown_b"] = true;
    SCOPED_TRACE(m.name);
    expect_error<InvalidArgument>(
        [&] { m.read(j.dump()); },
        {"2 unknown config fields", "'meshnn_unknown_a'", "'meshnn_unknown_b'"});
  }
  // In a GR00T document both readers refuse it, wherever it sits (nested head section included).
  for (const char* doc : {R"({"action_head_cfg": {"hidden_size": 32, "action_horizonn": 5}})",
                          R"({"diffusion_model_cfg": {"num_layerz": 4}})"}) {
    expect_error<InvalidArgument>([&] { gr00t::Config::from_json(doc, gr00t::Version::n1_5); },
                                  {"GR00T config", "unknown config field"});
    expect_error<InvalidArgument>(
        [&] { gr00t::ActionHeadConfig::from_json(doc, gr00t::Version::n1_5); },
        {"GR00T config", "unknown config field"});
  }
}

}  // namespace
}  // namespace meshnn::io
