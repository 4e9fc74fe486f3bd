// The audio models' descriptions against the checkpoints the Python tools write, and the rule that
// a checkpoint key is spelled in one C++ file.
#include "models/common/audio_description.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "io/json.h"
#include "meshnn/io/safetensors.h"
#include "models/gr00t/description.h"
#include "models/ltx/random.h"
#include "models/ltx/weights.h"
#include "support/fixtures.h"
#include "support/gr00t_policy_desc.h"

namespace meshnn::models {
namespace {

std::set<std::string> keys_of(const std::map<std::string, Shape>& m) {
  std::set<std::string> s;
  for (const auto& [k, v] : m) s.insert(k);
  return s;
}

// The fixtures were written by tools/make_checkpoint.py (`make goldens` regenerates them): the
// keys and shapes it writes must be exactly the description's, optional tensors included.
void expect_file_matches_description(const std::string& fixture) {
  const io::SafetensorsFile file = test::open_fixture(fixture);
  const LtxAudioConfig cfg =
      parse_ltx_audio_config(io::parse_json(file.metadata().at("config"), fixture), fixture);
  const std::map<std::string, Shape> want = required_shapes(describe_ltx(cfg), true);
  std::map<std::string, Shape> have;
  for (const std::string& k : file.keys()) have[k] = file.shape(k);
  std::vector<std::string> only_file, only_table;
  for (const auto& [k, s] : have)
    if (!want.count(k)) only_file.push_back(k);
  for (const auto& [k, s] : want)
    if (!have.count(k)) only_table.push_back(k);
  EXPECT_TRUE(only_file.empty()) << fixture << ": " << only_file.size()
                                 << " keys the description lacks, e.g. " << only_file.front();
  EXPECT_TRUE(only_table.empty()) << fixture << ": " << only_table.size()
                                  << " keys the file lacks, e.g. " << only_table.front();
  for (const auto& [k, s] : want) {
    if (have.count(k)) {
      EXPECT_EQ(have[k], s) << k;
    }
  }
}

TEST(AudioDescription, PythonWrittenLtx23KeysEqualTheTable) {
  expect_file_matches_description("ltx23_small.safetensors");
}

TEST(AudioDescription, PythonWrittenLtx2KeysEqualTheTable) {
  expect_file_matches_description("ltx2_small.safetensors");
}

// NVIDIA BigVGAN files use weight norm (weight_g / weight_v) where the table names `weight`; the
// fixture also carries golden tensors under "bigvgan." and the inputs, which are not weights.
TEST(AudioDescription, NvidiaBigVganKeysEqualTheTable) {
  const io::SafetensorsFile file = test::open_fixture("bigvgan_v2_24k_small.safetensors");
  const BigVganConfig cfg =
      parse_bigvgan_config(io::parse_json(file.metadata().at("config"), "fixture"), "fixture");
  const std::set<std::string> want =
      keys_of(required_shapes(describe_generator(cfg.generator, ""), true));
  std::set<std::string> have;
  std::set<std::string> tops;
  for (const std::string& k : want) tops.insert(k.substr(0, k.find('.')));
  for (const std::string& k : file.keys()) {
    if (!tops.count(k.substr(0, k.find('.')))) continue;  // goldens, inputs
    const bool weight_norm = k.ends_with(".weight_g") || k.ends_with(".weight_v");
    have.insert(weight_norm ? k.substr(0, k.size() - 9) + ".weight" : k);
  }
  EXPECT_EQ(have, want);
}

TEST(AudioDescription, RandomCheckpointHasExactlyTheTablesTensors) {
  const LtxAudioConfig cfg = parse_ltx_audio_config(ltx23_reference_config(), "reference");
  // A small config (the 161 M values of the real one take seconds to build).
  LtxAudioConfig small = cfg;
  small.vae.ch = 8;
  small.vocoder.upsample_initial_channel = 128;
  small.bwe.generator.upsample_initial_channel = 64;
  const std::map<std::string, Tensor> st = random_ltx_state(small, 3);
  const std::map<std::string, Shape> want_small = required_shapes(describe_ltx(small), true);
  std::set<std::string> have;
  for (const auto& [k, t] : st) {
    have.insert(k);
    EXPECT_EQ(t.shape(), want_small.at(k)) << k;
  }
  EXPECT_EQ(have, keys_of(want_small));
}

TEST(AudioDescription, FlopsOfTheLtx23Decode) {
  // 2 s of audio = 50 latent frames → 197 mel frames → 31 520 samples at 16 kHz → 394 BWE frames.
  const LtxAudioConfig cfg = parse_ltx_audio_config(ltx23_reference_config(), "reference");
  const double vocoder = flops(describe_generator(cfg.vocoder, ""), 197);
  const double bwe = flops(describe_generator(cfg.bwe.generator, ""), 394);
  const double vae = flops(describe_mel_vae(cfg.vae), 50);
  // Sizing of the stages (GFLOP per 2 s: mel-VAE ~122, vocoder ~302, BWE ~141), within 10 %.
  EXPECT_NEAR(vocoder / 1e9, 302, 30);
  EXPECT_NEAR(bwe / 1e9, 141, 15);
  EXPECT_NEAR(vae / 1e9, 122, 13);
}

// Every path component of every model's checkpoint keys (e.g. "resblocks", "act_post",
// "per_channel_statistics", "vl_self_attention", "proj_out_1") appears in string literals of
// exactly one C++ source file under src/ and include/: the file that describes that model or the
// layer that names its tensors (layers/state_dict.cc: weight, bias, W, b). Scanned: literals
// outside comments without spaces (messages are not keys). Not scanned: the audio config parser
// (audio_config.*: JSON field names such as "vocoder" are config, not tensor keys).
// Two parts name different modules in a layer and in a model, so they are spelled in both:
// "conv" (the CausalConv wrapper's inner conv vs the mel-VAE Upsample's conv) and "upsample" (the
// activation's filter vs the mel-VAE Upsample).
TEST(AudioDescription, EachKeyComponentIsSpelledInOneSourceFile) {
  const LtxAudioConfig cfg = parse_ltx_audio_config(ltx23_reference_config(), "reference");
  LtxAudioConfig v2 = cfg;
  v2.version = LtxAudioConfig::Version::ltx2;
  const io::SafetensorsFile nv = test::open_fixture("bigvgan_v2_24k_small.safetensors");
  const BigVganConfig bv =
      parse_bigvgan_config(io::parse_json(nv.metadata().at("config"), "f"), "f");
  std::vector<std::string> keys;
  for (const ModelDesc& d :
       {describe_ltx(cfg), describe_ltx(v2), describe_generator(bv.generator, "")})
    for (const auto& [k, s] : required_shapes(d, true)) keys.push_back(k);
  for (gr00t::Version v : {gr00t::Version::n1_5, gr00t::Version::n1_6, gr00t::Version::n1_7}) {
    const gr00t::Config c = gr00t::Config::defaults(v);
    for (const auto& [k, s] : gr00t::tensor_shapes(test::describe_gr00t_policy(
             c, gr00t::ActionHeadConfig::defaults(v), gr00t::default_weight_prefix())))
      keys.push_back(k);
  }
  std::set<std::string> parts;
  for (const std::string& k : keys) {
    std::stringstream ss(k);
    for (std::string p; std::getline(ss, p, '.');)
      if (!p.empty() && !std::isdigit(static_cast<unsigned char>(p[0]))) parts.insert(p);
  }
  // Literals in each source file, split at '.'.
  std::map<std::string, std::set<std::string>> files_of;  // part → files whose literals use it
  std::vector<std::filesystem::path> sources;
  for (const char* dir : {"/src", "/include"})
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(std::string(MESHNN_SOURCE_DIR) + dir))
      if (e.is_regular_file()) sources.push_back(e.path());
  for (const std::filesystem::path& file : sources) {
    const std::string path = file.string();
    if (!(path.ends_with(".cc") || path.ends_with(".h"))) continue;
    if (path.find("audio_config") != std::string::npos) continue;
    // The precision stage names ("vocoder" is also an LTX key part; a different thing).
    if (path.find("stage_precision.h") != std::string::npos) continue;
    // The MiniMax-H3 audio VAE's description: the one file that spells that model's keys (its
    // parts overlap the other models': block, decoder, norm1, …).
    if (path.find("minimax_h3/weights.cc") != std::string::npos) continue;
    // Hugging Face's file names (model.safetensors.index.json, …), not key parts.
    if (path.find("sharded_safetensors") != std::string::npos) continue;
    std::ifstream in(path);
    std::string text;
    for (std::string line; std::getline(in, line);) {
      // Drop a // comment (a "//" inside a literal does not occur in these sources).
      const size_t c = line.find("//");
      text += (c == std::string::npos ? line : line.substr(0, c)) + "\n";
    }
    // String literals: text between a pair of quotes on one line (no escaped quotes in keys).
    for (size_t b = text.find('"'); b != std::string::npos; b = text.find('"', b)) {
      const size_t end = text.find_first_of("\"\n", b + 1);
      if (end == std::string::npos) break;
      if (text[end] == '\n') {
        b = end + 1;
        continue;
      }
      const std::string literal = text.substr(b + 1, end - b - 1);
      b = end + 1;
      if (literal.find(' ') != std::string::npos) continue;
      std::stringstream ss(literal);
      for (std::string p; std::getline(ss, p, '.');)
        if (parts.count(p)) files_of[p].insert(file.filename().string());
    }
  }
  for (const std::string& p : parts) {
    if (p == "conv" || p == "upsample") {
      EXPECT_EQ(files_of[p].size(), 2u) << p;
      continue;
    }
    EXPECT_EQ(files_of[p].size(), 1u)
        << "key part '" << p << "' is spelled in " << files_of[p].size() << " files: " << [&] {
             std::string s;
             for (const auto& f : files_of[p]) s += f + " ";
             return s;
           }();
  }
}

}  // namespace
}  // namespace meshnn::models
