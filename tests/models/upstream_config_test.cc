// Configs as upstream writes them (tests/fixtures/configs/): Isaac-GR00T N1.5 / N1.6 and lerobot's
// GR00TN17Config, NVIDIA BigVGAN's released configs and diffusers' MiniMax-H3 config.json load
// with their complete field sets; a policy run on them equals the run on the checkpoint metadata's
// config bit for bit; an added unknown field is refused naming it and --allow-unknown-config, and
// loads under the flag; a contradicting architecture field is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/config_policy.h"
#include "models/common/audio_config.h"
#include "models/minimax_h3/config.h"
#include "support/expect_error.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using nlohmann::json;
using namespace meshnn::gr00t;

json read_fixture_json(const std::string& name) {
  return io::read_config_json_file(fixture_path("configs/" + name));
}

struct Upstream {
  Version v;
  const char* config;  // tests/fixtures/configs/
  const char* head;    // the weights whose dims it carries
  int select_layer;
};
const Upstream kUpstream[] = {
    {Version::n1_5, "gr00t_n1_5_isaac.json", "gr00t_head_n1_5.safetensors", 12},
    {Version::n1_6, "gr00t_n1_6_isaac.json", "gr00t_head_n1_6.safetensors", 16},
    {Version::n1_7, "gr00t_n1_7_lerobot.json", "gr00t_head_n1_7.safetensors", 16},
};

TEST(UpstreamGr00tConfig, FullFieldSetsReadAsTheMetadataConfig) {
  for (const Upstream& u : kUpstream) {
    SCOPED_TRACE(u.config);
    const io::SafetensorsFile f = open_fixture(u.head);
    Config c = Config::from_json_file(fixture_path(std::string("configs/") + u.config), u.v);
    EXPECT_EQ(c.select_layer, u.select_layer);
    c.select_layer = 0;
    const Config want = Config::from_metadata(f.metadata(), u.v);
    if (c.vl.n_blocks == 0) c.vl = want.vl;  // N1.6: no VL-SA, its (unused) dims are defaults
    EXPECT_EQ(c.to_json(), want.to_json());
    EXPECT_EQ(ActionHeadConfig::from_json(read_fixture_json(u.config).dump(), u.v).to_json(),
              ActionHeadConfig::from_metadata(f.metadata(), u.v).to_json());
  }
}

TEST(UpstreamGr00tConfig, PolicyOnTheUpstreamConfigEqualsTheMetadataRun) {
  for (const Upstream& u : kUpstream) {
    SCOPED_TRACE(u.config);
    const io::SafetensorsFile f = open_fixture(u.head);
    const Tensor types = f.get("input.token_types");
    LoadOptions lo;
    lo.config_path = fixture_path(std::string("configs/") + u.config);
    const Policy upstream = Policy::load(fixture_path(u.head), u.v, types, {}, lo);
    const Policy metadata = Policy::load(fixture_path(u.head), u.v, types);
    const int emb = std::stoi(f.metadata().at("embodiment"));
    const Tensor a = upstream.get_action(f.get("input.features"), Tensor(), f.get("input.state"),
                                         emb, f.get("input.noise"));
    const Tensor b = metadata.get_action(f.get("input.features"), Tensor(), f.get("input.state"),
                                         emb, f.get("input.noise"));
    EXPECT_TRUE(bit_equal(a, b, u.config));
  }
}

TEST(UpstreamGr00tConfig, UnknownFieldIsRefusedNamingTheFlagAndLoadsWithIt) {
  for (const Upstream& u : kUpstream) {
    SCOPED_TRACE(u.config);
    json j = read_fixture_json(u.config);
    j["meshnn_future_field"] = 3;
    if (j.contains("action_head_cfg")) j["action_head_cfg"]["head_future_field"] = true;
    const std::string text = j.dump();
    expect_error<InvalidArgument>(
        [&] { Config::from_json(text, u.v); },
        {"meshnn_future_field", "--allow-unknown-config", "allow_unknown_config=True"});
    expect_error<InvalidArgument>([&] { ActionHeadConfig::from_json(text, u.v); },
                                  {"meshnn_future_field"});
    if (j.contains("action_head_cfg"))
      expect_error<InvalidArgument>([&] { Config::from_json(text, u.v); }, {"head_future_field"});
    {
      const AllowUnknownConfig lenient;
      EXPECT_NO_THROW(Config::from_json(text, u.v));
      EXPECT_NO_THROW(ActionHeadConfig::from_json(text, u.v));
    }
    EXPECT_FALSE(AllowUnknownConfig::active());  // the scope ended with its block
    // Through the public load: refused, then loaded with LoadOptions::allow_unknown_config.
    const io::SafetensorsFile f = open_fixture(u.head);
    LoadOptions lo;
    lo.config_json = text;
    expect_error<InvalidArgument>(
        [&] { Policy::load(fixture_path(u.head), u.v, f.get("input.token_types"), {}, lo); },
        {"meshnn_future_field", "--allow-unknown-config"});
    lo.allow_unknown_config = true;
    EXPECT_NO_THROW(Policy::load(fixture_path(u.head), u.v, f.get("input.token_types"), {}, lo));
  }
}

// One edit of an upstream document and what its refusal must name.
struct Contradiction {
  int fixture;  // index in kUpstream
  std::function<void(json&)> edit;
  std::vector<std::string> says;
};

TEST(UpstreamGr00tConfig, ContradictingArchitectureFieldsAreRefused) {
  const std::vector<Contradiction> cases = {
      {1, [](json& j) { j["use_alternate_vl_dit"] = false; }, {"use_alternate_vl_dit", "n1.6"}},
      {2, [](json& j) { j["use_alternate_vl_dit"] = false; }, {"use_alternate_vl_dit", "n1.7"}},
      {0,
       [](json& j) { j["action_head_cfg"]["use_alternate_vl_dit"] = true; },
       {"use_alternate_vl_dit", "N1.5 has no AlternateVLDiT"}},
      {2, [](json& j) { j["state_history_length"] = 2; }, {"state_history_length"}},
      {1,
       [](json& j) { j["diffusion_model_cfg"]["output_dim"] = 1024; },
       {"output_dim", "hidden_size 32"}},
      {0,
       [](json& j) { j["action_head_cfg"]["diffusion_model_cfg"]["cross_attention_dim"] = 64; },
       {"cross_attention_dim", "backbone_embedding_dim 48"}},
      {0, [](json& j) { j["backbone_cfg"]["project_to_dim"] = 1536; }, {"project_to_dim"}},
      {0, [](json& j) { j["backbone_cfg"]["select_layer"] = 0; }, {"select_layer"}},
      {2, [](json& j) { j["select_layer"] = -1; }, {"select_layer"}},
      {0, [](json& j) { j["action_horizon"] = 16; }, {"action_horizon", "action_head_cfg"}},
      {2, [](json& j) { j["architectures"] = {"Gr00tN1d6"}; }, {"architectures", "Gr00tN1d6"}},
      {1, [](json& j) { j["model_type"] = "Gr00tN1d7"; }, {"model_type", "Gr00tN1d7"}},
      {1, [](json& j) { j["diffusion_model_cfg"]["norm_type"] = "layer_norm"; }, {"norm_type"}},
      {2,
       [](json& j) { j["vl_self_attention_cfg"]["positional_embeddings"] = "sinusoidal"; },
       {"positional_embeddings"}},
      {2, [](json& j) { j["strict_action_padding_mask"] = true; }, {"strict_action_padding_mask"}},
      {1, [](json& j) { j["add_pos_embed"] = false; }, {"add_pos_embed"}},
  };
  for (const Contradiction& c : cases) {
    const Upstream& u = kUpstream[c.fixture];
    json j = read_fixture_json(u.config);
    c.edit(j);
    SCOPED_TRACE(j.dump());
    // Known fields are checked with or without the flag.
    const AllowUnknownConfig lenient;
    try {
      Config::from_json(j.dump(), u.v);
      ADD_FAILURE() << "accepted";
    } catch (const InvalidArgument& e) {
      for (const std::string& p : c.says)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  }
}

// ---- audio configs ---------------------------------------------------------------------------

TEST(UpstreamAudioConfig, BigVganReleasedConfigsParseAndUnknownFieldsNeedTheFlag) {
  for (const char* name : {"bigvgan_v2_24khz_100band_256x.json", "bigvgan_24khz_100band.json"}) {
    SCOPED_TRACE(name);
    json j = read_fixture_json(name);
    const models::BigVganConfig c = models::parse_bigvgan_config(j, name);
    EXPECT_EQ(c.hop_size, 256);
    EXPECT_EQ(c.num_mels, 100);
    j["meshnn_future_field"] = 1;
    expect_error<InvalidArgument>([&] { models::parse_bigvgan_config(j, name); },
                                  {name, "meshnn_future_field", "--allow-unknown-config"});
    const AllowUnknownConfig lenient;
    EXPECT_NO_THROW(models::parse_bigvgan_config(j, name));
    j["resblock"] = "3";  // a known field is still checked
    EXPECT_THROW(models::parse_bigvgan_config(j, name), InvalidArgument);
  }
}

TEST(UpstreamAudioConfig, MiniMaxH3DiffusersConfigParsesAndUnknownFieldsNeedTheFlag) {
  json j = read_fixture_json("minimax_h3_audio_vae.json");
  ASSERT_TRUE(j.contains("_diffusers_version") && j.contains("_name_or_path"));
  EXPECT_EQ(models::minimax_h3::parse_config(j, "config.json").latent_channels, 8);
  j["meshnn_future_field"] = 1;
  expect_error<InvalidArgument>([&] { models::minimax_h3::parse_config(j, "config.json"); },
                                {"meshnn_future_field", "--allow-unknown-config"});
  const AllowUnknownConfig lenient;
  EXPECT_NO_THROW(models::minimax_h3::parse_config(j, "config.json"));
}

}  // namespace
}  // namespace meshnn::test
