// `meshnn verify A B` (the real binary): identical inputs give infinite PSNR and zero log-spectral
// distance; a known noise level gives the PSNR it must (computed here in float64); silence, a DC
// offset and NaN are reported; --min-psnr / --max-lsd turn into the exit status; mismatched
// shapes are an error; --report / --plot write their pictures.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "io/io_test_util.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"
#include "ops/permute.h"
#include "support/cli_run.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

using test::meshnn_binary;
constexpr auto sh = &test::shell;  // exit status and stdout + stderr of a command line

// A value "key": number out of the --json line.
double json_number(const std::string& out, const std::string& key) {
  const size_t at = out.find("\"" + key + "\": ");
  if (at == std::string::npos) return NAN;
  const std::string rest = out.substr(at + key.size() + 4);
  if (rest.rfind("\"inf\"", 0) == 0) return INFINITY;
  return std::stod(rest);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class VerifyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
    dir = test::scratch_dir();
    // Two seconds of a random-phase chord at 16 kHz, stereo, plus fresh noise.
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> ph(0.f, 6.28f);
    ref = Tensor::empty({2, T});  // (C, T), as write_wav takes it
    float* r = ref.data<float>();
    const float p0 = ph(rng), p1 = ph(rng);
    for (int64_t t = 0; t < T; ++t)
      for (int c = 0; c < 2; ++c)
        r[c * T + t] = 0.4f * std::sin(2.f * float(M_PI) * (220.f + 110.f * c) * t / 16000.f + p0) +
                       0.2f * std::sin(2.f * float(M_PI) * 1330.f * t / 16000.f + p1);
    io::write_wav(dir + "/a.wav", ref, 16000);
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  std::string run(const std::string& args, int* code = nullptr) {
    auto [c, out] = sh(meshnn_binary() + " verify " + args);
    if (code) *code = c;
    return out;
  }
  static constexpr int64_t T = 32000;
  std::string dir;
  Tensor ref;
};

TEST_F(VerifyCli, IdenticalAndNoisyWavs) {
  int code = -1;
  std::string out = run(dir + "/a.wav " + dir + "/a.wav --json --min-psnr 100", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(std::isinf(json_number(out, "psnr_db"))) << out;
  EXPECT_EQ(json_number(out, "lsd_db"), 0.0) << out;

  // Gaussian noise of std σ: PSNR = 20·log10(peak / rms(noise)), computed from the actual noise.
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.f, 1e-3f);
  Tensor noisy = Tensor::empty({2, T});
  double peak = 0, se = 0;
  for (int64_t i = 0; i < 2 * T; ++i) {
    const float a = ref.data<float>()[i];
    noisy.data<float>()[i] = a + nd(rng);
    peak = std::max(peak, std::abs(double(a)));
    const double d = double(noisy.data<float>()[i]) - a;
    se += d * d;
  }
  const double want = 10 * std::log10(peak * peak / (se / (2 * T)));
  io::write_wav(dir + "/b.wav", noisy, 16000);
  out = run(dir + "/a.wav " + dir + "/b.wav --json", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NEAR(json_number(out, "psnr_db"), want, 0.01) << out;
  const double lsd = json_number(out, "lsd_db");
  EXPECT_GT(lsd, 0.0) << out;
  // Thresholds become the exit status.
  run(dir + "/a.wav " + dir + "/b.wav --min-psnr " + std::to_string(want + 1), &code);
  EXPECT_EQ(code, 1);
  run(dir + "/a.wav " + dir + "/b.wav --min-psnr " + std::to_string(want - 1), &code);
  EXPECT_EQ(code, 0);
  run(dir + "/a.wav " + dir + "/b.wav --max-lsd " + std::to_string(lsd / 2), &code);
  EXPECT_EQ(code, 1);
  out = run(dir + "/a.wav " + dir + "/b.wav", &code);
  EXPECT_NE(out.find("PSNR:"), std::string::npos) << out;
  EXPECT_NE(out.find("result:        ok"), std::string::npos) << out;
}

// --report / --plot (the pictures, also run under ASan by make test-asan): a PNG and an HTML page
// holding three PNGs; a NaN in B and a 1-sample-short clip still give pictures.
TEST_F(VerifyCli, ReportAndPlotPictures) {
  std::mt19937 rng(13);
  std::normal_distribution<float> nd(0.f, 0.05f);
  Tensor b = Tensor::empty({2, T});  // channel-first .npy: a WAV cannot hold the NaN
  for (int64_t t = 0; t < T; ++t)
    for (int c = 0; c < 2; ++c) b.data<float>()[c * T + t] = ref.data<float>()[c * T + t] + nd(rng);
  b.data<float>()[777] = NAN;
  io::save_npy(dir + "/b.npy", b);
  int code = -1;
  const std::string out = run(
      dir + "/a.wav " + dir + "/b.npy --report " + dir + "/r.html --plot " + dir + "/d.png", &code);
  EXPECT_EQ(code, 1) << out;  // the NaN fails verify; the pictures are written all the same
  const std::string png = slurp(dir + "/d.png");
  ASSERT_GT(png.size(), 100u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const std::string html = slurp(dir + "/r.html");
  size_t images = 0;
  for (size_t at = 0;
       (at = html.find("data:image/png;base64,iVBORw0KGgo", at)) != std::string::npos; ++at)
    ++images;
  EXPECT_EQ(images, 3u);
  EXPECT_NE(html.find("NaN / Inf"), std::string::npos);
  // Short inputs (under one FFT frame) give pictures too.
  Tensor s = Tensor::empty({1, 301});
  for (int64_t t = 0; t < 301; ++t) s.data<float>()[t] = ref.data<float>()[t];
  io::write_wav(dir + "/s.wav", s, 16000);
  run(dir + "/s.wav " + dir + "/s.wav --plot " + dir + "/s.png", &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(slurp(dir + "/s.png").substr(1, 3), "PNG");
}

TEST_F(VerifyCli, SilenceDcOffsetAndNan) {
  Tensor quiet = Tensor::empty({2, T}), dc = Tensor::empty({2, T});
  for (int64_t i = 0; i < 2 * T; ++i) {
    quiet.data<float>()[i] = 1e-5f * ref.data<float>()[i];
    dc.data<float>()[i] = ref.data<float>()[i] + 0.2f;
  }
  io::write_wav(dir + "/quiet.wav", quiet, 16000);
  io::write_wav(dir + "/dc.wav", dc, 16000);
  int code = -1;
  std::string out = run(dir + "/a.wav " + dir + "/quiet.wav --min-psnr 0", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("is silent where A is not"), std::string::npos) << out;
  out = run(dir + "/a.wav " + dir + "/dc.wav --json", &code);
  EXPECT_EQ(code, 0) << out;  // a warning: the level is within the band and the AC is intact
  EXPECT_NEAR(json_number(out, "dc_b"), 0.2 + json_number(out, "dc_a"), 1e-4) << out;
  EXPECT_NE(out.find("DC offset"), std::string::npos) << out;

  // .npy arrays, one NaN.
  Tensor x = Tensor::empty({3, 1000}), y = Tensor::empty({3, 1000});
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t i = 0; i < 3000; ++i) x.data<float>()[i] = y.data<float>()[i] = u(rng);
  y.data<float>()[1234] = NAN;
  io::save_npy(dir + "/x.npy", x);
  io::save_npy(dir + "/y.npy", y);
  out = run(dir + "/x.npy " + dir + "/y.npy --min-psnr 10", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("NaN/Inf"), std::string::npos) << out;
}

// A model's output array (B, 1, L), as PyTorch references save it, compares with the WAV the CLI
// writes for it (one channel per item): item b is channel b; with the items swapped it differs.
TEST_F(VerifyCli, ModelOutputArrayAgainstItsWav) {
  Tensor items = Tensor::empty({2, 1, T}), swapped = Tensor::empty({2, 1, T});
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t t = 0; t < T; ++t) {
      items.data<float>()[c * T + t] = ref.data<float>()[c * T + t];
      swapped.data<float>()[(1 - c) * T + t] = ref.data<float>()[c * T + t];
    }
  io::save_npy(dir + "/items.npy", items);
  io::save_npy(dir + "/swapped.npy", swapped);
  int code = 0;
  std::string out = run(dir + "/items.npy " + dir + "/a.wav --json", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(std::isinf(json_number(out, "psnr_db"))) << out;
  out = run(dir + "/swapped.npy " + dir + "/a.wav --json", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_LT(json_number(out, "psnr_db"), 40.0) << out;
}

TEST_F(VerifyCli, MismatchedShapesAreAnError) {
  io::save_npy(dir + "/p.npy", test::random_tensor({4, 5}, DType::f32, 21));
  io::save_npy(dir + "/q.npy", test::random_tensor({5, 4}, DType::f32, 22));
  int code = 0;
  const std::string out = run(dir + "/p.npy " + dir + "/q.npy", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("shapes differ"), std::string::npos) << out;
}

// Issue 35 finding 3: B's NaN/Inf, silence and DC-only fail by default (no threshold given).
TEST_F(VerifyCli, BrokenBFailsWithoutAThreshold) {
  // (C, T) arrays: a WAV cannot hold a NaN.
  Tensor a = Tensor::empty({2, T}), nan = Tensor::empty({2, T}), zero = Tensor::empty({2, T}),
         dc = Tensor::empty({2, T});
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t t = 0; t < T; ++t) {
      const float v = ref.data<float>()[c * T + t];
      a.data<float>()[c * T + t] = nan.data<float>()[c * T + t] = v;
      zero.data<float>()[c * T + t] = 0.f;
      dc.data<float>()[c * T + t] = 0.3f;
    }
  nan.data<float>()[777] = NAN;
  io::save_npy(dir + "/a.npy", a);
  io::save_npy(dir + "/nan.npy", nan);
  io::save_npy(dir + "/zero.npy", zero);
  io::save_npy(dir + "/dc.npy", dc);
  for (const auto& [name, what] : {std::pair<std::string, std::string>{"nan", "NaN/Inf"},
                                   {"zero", "is silent"},
                                   {"dc", "DC only"}}) {
    int code = -1;
    std::string out = run(dir + "/a.npy " + dir + "/" + name + ".npy", &code);
    EXPECT_EQ(code, 1) << name << "\n" << out;
    EXPECT_NE(out.find(what), std::string::npos) << out;
    EXPECT_NE(out.find("result:        FAIL"), std::string::npos) << out;
    out = run(dir + "/a.npy " + dir + "/" + name + ".npy --json", &code);
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("\"pass\": false"), std::string::npos) << out;
  }
}

// A NaN or infinite bound is a usage error, not "no bound".
TEST_F(VerifyCli, NonFiniteBoundsAreRefused) {
  for (const char* opt : {"--min-psnr nan", "--max-lsd nan", "--max-lsd inf", "--silence-dbfs nan",
                          "--level-band-db nan", "--min-psnr -inf", "--segments 0", "--max-lsd -1",
                          "--min-psnr 40x"}) {
    int code = -1;
    const std::string out = run(dir + "/a.wav " + dir + "/a.wav " + opt, &code);
    EXPECT_EQ(code, 2) << opt << "\n" << out;
  }
}

// .npy layouts: (C, T) is C channels (a silent channel is found), (1, C, T) the same; (T, C) is
// refused with the hint to transpose.
TEST_F(VerifyCli, ArraysAreChannelFirstAndMeasuredPerChannel) {
  Tensor a = Tensor::empty({2, T}), b = Tensor::empty({2, T});
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t t = 0; t < T; ++t) {
      a.data<float>()[c * T + t] = ref.data<float>()[c * T + t];
      b.data<float>()[c * T + t] = c == 0 ? ref.data<float>()[t] : 0.f;
    }
  io::save_npy(dir + "/a.npy", a);
  io::save_npy(dir + "/b.npy", b);
  io::save_npy(dir + "/a3.npy", a.reshape({1, 2, T}));
  io::save_npy(dir + "/b3.npy", b.reshape({1, 2, T}));
  int code = -1;
  for (const std::string& pair :
       {"/a.npy " + dir + "/b.npy", "/a3.npy " + dir + "/b3.npy", "/a.wav " + dir + "/b.npy"}) {
    const std::string out = run(dir + pair + " --json", &code);
    EXPECT_EQ(code, 1) << pair << "\n" << out;
    EXPECT_EQ(json_number(out, "channels"), 2.0) << out;
    EXPECT_NE(out.find("B channel 1 is silent"), std::string::npos) << out;
  }
  std::string out = run(dir + "/a.npy " + dir + "/a3.npy --json", &code);
  EXPECT_EQ(code, 0) << out;
  io::save_npy(dir + "/tc.npy", ops::interleave(ref));  // (T, 2)
  out = run(dir + "/a.wav " + dir + "/tc.npy", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("transposed"), std::string::npos) << out;
}

// The level per segment: a 16.6x energy drop in one tenth of B (what tt-metal saw at one length,
// which a whole-signal RMS floor passed) fails; a 2 dB gain is inside the default ±3 dB band and
// outside a 1 dB one.
TEST_F(VerifyCli, LevelPerSegment) {
  Tensor drop = ref.clone(), gain = ref.clone();
  const float g = static_cast<float>(std::pow(10.0, 2.0 / 20));
  for (int64_t i = 0; i < 2 * T; ++i) {
    gain.data<float>()[i] *= g;
    const int64_t t = i % T;
    if (t >= 3 * T / 10 && t < 4 * T / 10) drop.data<float>()[i] /= std::sqrt(16.6f);
  }
  io::write_wav(dir + "/drop.wav", drop, 16000);
  io::write_wav(dir + "/gain.wav", gain, 16000);
  int code = -1;
  std::string out = run(dir + "/a.wav " + dir + "/drop.wav --json", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NEAR(json_number(out, "level_min_db"), -10 * std::log10(16.6), 0.05) << out;
  EXPECT_NE(out.find("segment 4 of 10"), std::string::npos) << out;
  out = run(dir + "/a.wav " + dir + "/gain.wav --json", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NEAR(json_number(out, "level_max_db"), 2.0, 0.01) << out;
  run(dir + "/a.wav " + dir + "/gain.wav --level-band-db 1", &code);
  EXPECT_EQ(code, 1);
  // One segment (the whole signal): the drop averages to under 3 dB and passes.
  run(dir + "/a.wav " + dir + "/drop.wav --segments 1", &code);
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace meshnn
