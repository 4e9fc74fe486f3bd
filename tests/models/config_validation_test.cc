// LTX / BigVGAN configs that would decode wrong audio silently are refused: every
// architecture-changing field, strict integers, duplicate keys, overflow shown as written, and
// checkpoint tensors under the audio prefixes that no layer uses.
#include <gtest/gtest.h>

#include <functional>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/common/audio_config.h"
#include "models/common/audio_description.h"
#include "models/common/checkpoint_check.h"
#include "models/ltx/random.h"
#include "models/ltx/weights.h"
#include "support/expect_error.h"

namespace meshnn::models {

using meshnn::test::expect_error;
namespace {

using nlohmann::json;

// Parses a config through the same path as a checkpoint's metadata (text → strict JSON → config).
LtxAudioConfig parse_text(const std::string& text) {
  return parse_ltx_audio_config(io::parse_config_json(text, "test config"), "test.safetensors");
}

void expect_config_error(const std::function<void(json&)>& edit,
                         std::initializer_list<std::string> parts) {
  json c = ltx23_reference_config();
  edit(c);
  expect_error([&] { parse_text(c.dump()); }, parts);
}

TEST(LtxConfigValidation, ReferenceConfigParses) {
  const LtxAudioConfig c = parse_text(ltx23_reference_config().dump());
  EXPECT_EQ(c.vocoder.hop(), 160);
  EXPECT_EQ(c.output_sampling_rate(), 48000);
}

TEST(LtxConfigValidation, VocoderRateProductMustMatchTheMelHop) {
  // 320 instead of 160: twice the audio from the same latent.
  expect_config_error(
      [](json& c) { c["vocoder"]["vocoder"]["upsample_rates"] = {5, 2, 2, 2, 2, 4}; },
      {"multiply to 320", "needs 160"});
  // The mel hop of the VAE's STFT is what fixes it.
  expect_config_error(
      [](json& c) {
        c["audio_vae"]["preprocessing"] = {{"stft", {{"hop_length", 320}}}};
      },
      {"multiply to 160", "needs 320"});
}

TEST(LtxConfigValidation, HopLengthZeroOr161IsRefused) {
  for (int hop : {0, 161}) {
    expect_config_error([&](json& c) { c["vocoder"]["bwe"]["hop_length"] = hop; }, {"hop_length"});
    expect_config_error([&](json& c) { c["vocoder"]["vocoder"]["hop_length"] = hop; },
                        {"hop_length"});
  }
}

TEST(LtxConfigValidation, FractionalAndNonIntegerIntegersAreRefused) {
  expect_config_error([](json& c) { c["vocoder"]["vocoder"]["upsample_initial_channel"] = 64.5; },
                      {"upsample_initial_channel", "must be an integer", "64.5"});
  expect_config_error([](json& c) { c["vocoder"]["bwe"]["n_fft"] = "512"; }, {"n_fft", "integer"});
  expect_config_error([](json& c) { c["vocoder"]["vocoder"]["upsample_rates"][1] = 2.0; },
                      {"upsample_rates[1]", "integer"});
  expect_config_error([](json& c) { c["audio_vae"]["model"]["params"]["ddconfig"]["ch"] = true; },
                      {"'ch'", "integer"});
}

TEST(LtxConfigValidation, OverflowIsReportedAsWritten) {
  std::string text = ltx23_reference_config().dump();
  const std::string from = "\"upsample_initial_channel\":1536";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"upsample_initial_channel\":1180591620717411303424");
  expect_error([&] { parse_text(text); }, {"1180591620717411303424", "out of range"});
  json c = ltx23_reference_config();
  c["vocoder"]["bwe"]["hop_length"] = int64_t{1} << 40;
  expect_error([&] { parse_text(c.dump()); }, {"1099511627776", "out of range"});
}

TEST(LtxConfigValidation, UnknownFieldsAreRefused) {
  expect_config_error([](json& c) { c["audio_vae_v2"] = json::object(); },
                      {"unknown config field 'audio_vae_v2'"});
  expect_config_error([](json& c) { c["vocoder"]["bwe"]["extra_stage"] = 1; }, {"'extra_stage'"});
  // The other models of a full LTX-2 file stay allowed.
  json c = ltx23_reference_config();
  c["transformer"] = {{"num_layers", 48}};
  c["vae"] = {{"dims", 3}};
  EXPECT_NO_THROW(parse_text(c.dump()));
}

TEST(LtxConfigValidation, ArchitectureFieldsMeshnnDoesNotReadMustHoldItsValues) {
  expect_config_error([](json& c) { c["vocoder"]["vocoder"]["antialias_ratio"] = 4; },
                      {"antialias_ratio"});
  expect_config_error([](json& c) { c["vocoder"]["bwe"]["win_size"] = 400; }, {"win_size"});
  expect_config_error([](json& c) { c["vocoder"]["bwe"]["apply_final_activation"] = true; },
                      {"apply_final_activation"});
  expect_config_error([](json& c) { c["audio_vae"]["model"]["params"]["embed_dim"] = 16; },
                      {"embed_dim"});
  expect_config_error(
      [](json& c) { c["audio_vae"]["model"]["params"]["ddconfig"]["downsample_time"] = true; },
      {"downsample_time"});
  expect_config_error([](json& c) { c["vocoder"]["vocoder"]["resblock_dilation_sizes"][0][1] = 0; },
                      {"dilation"});
}

TEST(LtxConfigValidation, DuplicateKeysAreRefused) {
  std::string text = ltx23_reference_config().dump();
  const std::string from = "\"hop_length\":80";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"hop_length\":80,\"hop_length\":160");
  try {
    parse_text(text);
    ADD_FAILURE() << "accepted";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("duplicate key 'hop_length' in 'vocoder.bwe'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(io::parse_config_json("{\"a\":1,\"a\":1}", "t"), FormatError);
  EXPECT_NO_THROW(io::parse_config_json("{\"a\":{\"b\":1},\"c\":{\"b\":1}}", "t"));
}

TEST(BigVganConfigValidation, NonPositiveRatesAndSizesAreRefused) {
  const json base = {{"resblock", "1"},
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
                     {"fmax", 8000}};
  EXPECT_NO_THROW(parse_bigvgan_config(base, "config.json"));
  for (int sr : {0, -22050}) {
    json j = base;
    j["sampling_rate"] = sr;
    expect_error([&] { parse_bigvgan_config(j, "config.json"); }, {"sampling_rate"});
  }
  json j = base;
  j["hop_size"] = 0;
  EXPECT_THROW(parse_bigvgan_config(j, "config.json"), InvalidArgument);
  j = base;
  j["fmax"] = 9000;  // above Nyquist
  EXPECT_THROW(parse_bigvgan_config(j, "config.json"), InvalidArgument);
}

TEST(CheckpointCheck, UnusedAudioTensorsAreAnErrorByDefault) {
  const LtxAudioConfig cfg = parse_text(ltx23_reference_config().dump());
  std::map<std::string, Shape> t = required_shapes(describe_ltx(cfg), true);
  EXPECT_EQ(check_ltx_checkpoint(cfg, t).problems({}), 0u);
  // Other models' tensors and the VAE encoder: allowed.
  t["model.diffusion_model.blocks.0.attn.to_q.weight"] = {8, 8};
  t["audio_vae.encoder.conv_in.conv.weight"] = {128, 2, 3, 3};
  EXPECT_NO_THROW(require_ltx_checkpoint(cfg, t, {}, "x.safetensors"));
  // A vocoder stage the config does not describe: refused, unless allowed.
  t["vocoder.vocoder.ups.6.weight"] = {24, 12, 4};
  expect_error([&] { require_ltx_checkpoint(cfg, t, {}, "x.safetensors"); },
               {"x.safetensors", "unused", "vocoder.vocoder.ups.6.weight"});
  CheckpointCheckOptions allow;
  allow.allow_unused_audio_tensors = true;
  EXPECT_NO_THROW(require_ltx_checkpoint(cfg, t, allow, "x.safetensors"));
  // Missing and mis-shaped tensors are listed together.
  t.erase("vocoder.bwe_generator.conv_pre.weight");
  t["vocoder.mel_stft.mel_basis"] = {64, 256};
  expect_error([&] { require_ltx_checkpoint(cfg, t, allow, "x.safetensors"); },
               {"missing", "conv_pre.weight", "wrong shape", "mel_basis"});
}

}  // namespace
}  // namespace meshnn::models

namespace meshnn::gr00t {

using meshnn::test::expect_error;
namespace {

// Found by gr00t_config_fuzz: a float where an integer belongs was cast (1e128 → undefined
// behaviour, 64.5 → 64). Integer fields are strict now.
TEST(Gr00tConfigValidation, IntegerFieldsAreStrict) {
  for (const char* bad : {"{\"hidden_size\": 3.14e128}", "{\"hidden_size\": 64.5}",
                          "{\"row_block\": \"64\"}", "{\"max_state_dim\": 99999999999999999999}"}) {
    try {
      Config::from_json(bad, Version::n1_5);
      ADD_FAILURE() << bad << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("config field"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace meshnn::gr00t
