// NVIDIA BigVGAN generators (v2 24 kHz, v2 44 kHz 512×, base 24 kHz; reduced width, real structure
// and key names) and the meldataset.py mel front end against PyTorch goldens (gen_bigvgan.py).
#include <gtest/gtest.h>

#include "io/json.h"
#include "models/bigvgan/model.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::models {
namespace {

class BigVganGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(BigVganGolden, CopySynthesisMatchesPyTorch) {
  const std::string name = GetParam();
  auto file = io::SafetensorsFile::open(test::fixture_path(name));
  auto model = BigVgan::load(file, "", Precision::fp32);
  // Front end: the golden mel of the golden wav.
  const Tensor wav = file.get("input.wav");
  Tensor mel = model->mel_of(wav.reshape({wav.numel()}));
  const Tensor& ref_mel = file.get("input.mel");
  EXPECT_TRUE(test::close_rel_l2(mel.reshape(ref_mel.shape()), ref_mel, 1e-5, name + " mel"));
  // Generator from the golden mel.
  Tensor y = model->vocode_mel(ref_mel.to(DType::f32));
  const Tensor ref = file.get("output").to(DType::f32);
  EXPECT_TRUE(test::close_rel_l2(y.reshape(ref.shape()), ref, 1e-5, name + " waveform"));
}

INSTANTIATE_TEST_SUITE_P(Configs, BigVganGolden,
                         ::testing::Values("bigvgan_v2_24k_small.safetensors",
                                           "bigvgan_v2_44k_small.safetensors",
                                           "bigvgan_base_24k_small.safetensors"));

// The all-at-once key check (require_bigvgan_checkpoint): every problem of the generator's keys in
// one WeightError naming the file, before any layer is built; keys outside the generator (the
// fixture's goldens) are not its business, the anti-aliasing filters may be absent.
TEST(BigVganCheckpoint, EveryKeyProblemIsReportedAtOnce) {
  auto file = io::SafetensorsFile::open(test::fixture_path("bigvgan_base_24k_small.safetensors"));
  const BigVganConfig cfg =
      parse_bigvgan_config(io::parse_config_json(file.metadata().at("config"), "c"), "c");
  std::map<std::string, Tensor> state;
  for (const std::string& k : file.keys()) state.emplace(k, file.get(k));
  std::map<std::string, Tensor> bad = state;
  bad.erase("resblocks.0.convs1.0.bias");                  // missing
  bad.at("conv_post.bias") = Tensor({3});                  // wrong shape
  bad.emplace("resblocks.99.convs1.0.bias", Tensor({4}));  // unused by every layer
  bad.erase("ups.0.0.weight_v");                           // a weight-norm half alone
  try {
    BigVgan(cfg, bad, Precision::fp32, "x.safetensors");
    ADD_FAILURE() << "accepted";
  } catch (const WeightError& e) {
    const std::string msg = e.what();
    for (const char* part :
         {"x.safetensors", "4 checkpoint key problem", "missing", "'resblocks.0.convs1.0.bias'",
          "wrong shape", "'conv_post.bias'", "unused", "'resblocks.99.convs1.0.bias'",
          "'ups.0.0.weight_g' without"})
      EXPECT_NE(msg.find(part), std::string::npos) << part << " not in: " << msg;
  }
  // Filters absent, the same state under "generator.": accepted.
  std::map<std::string, Tensor> nested;
  for (const auto& [k, t] : state)
    if (k.find(".filter") == std::string::npos) nested.emplace("generator." + k, t);
  EXPECT_NO_THROW(BigVgan(cfg, nested, Precision::fp32));
}

TEST(MelFrontEnd, MatchesTorchStftPath) {
  auto file = io::SafetensorsFile::open(test::fixture_path("bigvgan_mel_frontend.safetensors"));
  const nlohmann::json configs = io::parse_json(file.metadata().at("configs"), "configs");
  int checked = 0;
  for (auto it = configs.begin(); it != configs.end(); ++it) {
    // The mel front-end fields of a BigVGAN config.json (fmax null or absent = sampling_rate / 2).
    const nlohmann::json& j = it.value();
    BigVganConfig c;
    c.generator.sampling_rate = j.at("sampling_rate").get<int>();
    c.num_mels = j.at("num_mels").get<int>();
    c.n_fft = j.at("n_fft").get<int>();
    c.hop_size = j.at("hop_size").get<int>();
    c.win_size = j.at("win_size").get<int>();
    c.fmin = j.contains("fmin") && !j.at("fmin").is_null() ? j.at("fmin").get<double>() : 0.0;
    c.fmax = j.contains("fmax") && !j.at("fmax").is_null() ? j.at("fmax").get<double>() : 0.0;
    const ops::MelConfig m = mel_config_of(c);
    const Tensor wav = file.get(it.key() + ".input.wav");
    Tensor mel = ops::bigvgan_mel_spectrogram(wav.reshape({wav.numel()}), m);
    const Tensor ref = file.get(it.key() + ".output.mel");
    EXPECT_TRUE(test::close_rel_l2(mel.reshape(ref.shape()), ref, 1e-5, it.key()));
    ++checked;
  }
  EXPECT_EQ(checked, 3);
  ops::MelConfig fb;
  fb.sampling_rate = 16000;
  fb.n_fft = 256;
  fb.num_mels = 20;
  fb.fmax = 8000;
  EXPECT_TRUE(test::close_rel_l2(ops::slaney_mel_filterbank(fb),
                                 file.get("filterbank.sr16000_nfft256_mels20_fmax8000"), 1e-6,
                                 "filterbank"));
  ops::MelConfig big;  // 1024-point STFT: reflect pad 384 needs more than 100 samples
  EXPECT_THROW(ops::bigvgan_mel_spectrogram(Tensor({100}), big), ShapeError);
}

}  // namespace
}  // namespace meshnn::models
