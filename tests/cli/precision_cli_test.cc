// --precision on the command line (the real binary): per-stage forms and the preset decode, bad
// forms fail before any work with a message naming the valid values, a model refuses a stage it
// lacks, and `meshnn-bench precision` writes its table into a document's generated block.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/io_test_util.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

using test::CliRun;
using test::meshnn_binary;
constexpr auto run = &test::run_meshnn;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class PrecisionCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
    dir = test::scratch_dir();
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  CliRun decode(const std::string& ckpt, const std::string& precision, const std::string& out) {
    return run("audio-decode --quiet --checkpoint " + test::fixture_path(ckpt) + " --latent " +
               test::fixture_path("ltx23_small_latent.npy") + " --out " + out + " --precision '" +
               precision + "'");
  }
  std::string dir;
};

TEST_F(PrecisionCli, PresetAndPairsDecodeAndThePresetIsItsSpelledOutForm) {
  const std::string a = dir + "/preset.wav", b = dir + "/pairs.wav", c = dir + "/fp32.wav";
  CliRun r = decode("ltx23_small.safetensors", "bf16-safe", a);
  ASSERT_EQ(r.code, 0) << r.output;
  r = decode("ltx23_small.safetensors", "vae=bf16,vocoder=bf16,bwe=fp32", b);
  ASSERT_EQ(r.code, 0) << r.output;
  r = decode("ltx23_small.safetensors", "fp32", c);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(slurp(a), slurp(b));
  EXPECT_NE(slurp(a), slurp(c));
}

TEST_F(PrecisionCli, BadFormsFailNamingTheValidValues) {
  const std::string out = dir + "/x.wav";
  struct Case {
    const char* precision;
    const char* needle;
  };
  for (const Case& c :
       {Case{"vea=bf16", "unknown stage 'vea' (stages: vae, vocoder, bwe)"},
        Case{"vae=bf16,vae=fp32", "stage 'vae' is given twice"},
        Case{"vae=fp16", "unknown precision mode 'fp16' for stage vae (expected fp32, bf16"},
        Case{"fp8", "a preset (bf16-safe, auto)"}, Case{"vae=bf16,", "is not stage=mode"}}) {
    SCOPED_TRACE(c.precision);
    const CliRun r = decode("ltx23_small.safetensors", c.precision, out);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_TRUE(has(r.output, c.needle)) << r.output;
    EXPECT_FALSE(fs::exists(out));
  }
  // LTX-2 has no BWE.
  CliRun r = decode("ltx2_small.safetensors", "bwe=bf16", out);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "LTX-2 has no stage 'bwe' (its stages: vae, vocoder)")) << r.output;
  // BigVGAN has only the vocoder stage, and not the LTX preset.
  for (const char* p : {"vae=bf16", "bf16-safe"}) {
    r = run("vocode --checkpoint " + test::fixture_path("bigvgan_v2_24k_small.safetensors") +
            " --mel " + test::fixture_path("io_sample_f32.npy") + " --out " + out +
            " --precision " + p);
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_TRUE(has(r.output, "NVIDIA BigVGAN has no stage 'vae' (its stages: vocoder)"))
        << r.output;
  }
}

TEST_F(PrecisionCli, BenchPrecisionRefusesADocWithoutTheGeneratedBlock) {
  const std::string doc = dir + "/doc.md";
  std::ofstream(doc) << "# no markers\n";
  const CliRun r = run("bench precision --models bigvgan --update-doc " + doc);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "no generated block")) << r.output;
  EXPECT_EQ(slurp(doc), "# no markers\n");
}

}  // namespace
}  // namespace meshnn
