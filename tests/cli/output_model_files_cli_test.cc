// The output rule over the files a model opens (issue 35, finding 1), against the real binary: an
// --out / --log-std that is config.json or the weights inside a model folder (or beside a
// checkpoint file), spelled directly, with ./ and .., through a symlink or a hard link, is refused
// before anything is written (one shot and --stream), and the model's bytes stay; a new file in
// the folder is still a valid output; two outputs cannot be one file. Also AudioModel::files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "meshnn/audio_model.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/wav.h"
#include "support/cli_run.h"
#include "support/golden.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

class OutputOverModelFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(test::meshnn_binary())) GTEST_SKIP() << "meshnn CLI not built";
    dir = test::scratch_dir();
    h3 = dir + "/h3";
    fs::copy(test::fixture_path("minimax_h3_tiny"), h3);
    // A stereo WAV at the model's rate (random, seeded) and random (2, 8, 5) latents.
    std::mt19937 rng(35);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    Tensor w = Tensor::empty({2, 1600});  // (C, T)
    for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = u(rng);
    io::write_wav(dir + "/in.wav", w, 32000);
    io::save_npy(dir + "/z.npy", test::random_tensor({2, 8, 5}, DType::f32, 36));
    // Other spellings of the two files: a symlink, a hard link, ./ and .. forms.
    fs::create_symlink(h3 + "/config.json", dir + "/link.json");
    fs::create_hard_link(h3 + "/diffusion_pytorch_model.safetensors", dir + "/hard.safetensors");
    victims = {h3 + "/config.json",   h3 + "/diffusion_pytorch_model.safetensors",
               h3 + "/./config.json", dir + "/h3/../h3/diffusion_pytorch_model.safetensors",
               dir + "/link.json",    dir + "/hard.safetensors"};
    before = {bytes_of(h3 + "/config.json"), bytes_of(h3 + "/diffusion_pytorch_model.safetensors")};
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }
  // Every victim as `option` of `args` is refused, naming the rule; the model is unchanged.
  void expect_refused(const std::string& args, const std::string& option) {
    for (const std::string& v : victims) {
      const test::CliRun r = test::run_meshnn(args + " " + option + " " + v);
      EXPECT_EQ(r.code, 1) << args << " " << option << " " << v << "\n" << r.output;
      EXPECT_NE(r.output.find("same file as the input"), std::string::npos) << v << r.output;
      EXPECT_EQ(bytes_of(h3 + "/config.json"), before[0]) << "config.json overwritten by " << v;
      EXPECT_EQ(bytes_of(h3 + "/diffusion_pytorch_model.safetensors"), before[1])
          << "weights overwritten by " << v;
    }
  }
  std::string dir, h3;
  std::vector<std::string> victims, before;
};

TEST_F(OutputOverModelFiles, AudioEncodeOutAndLogStd) {
  const std::string enc = "audio-encode --quiet --checkpoint " + h3 + " --wav " + dir + "/in.wav";
  expect_refused(enc, "--out");
  expect_refused(enc + " --stream", "--out");
  expect_refused(enc + " --out " + dir + "/m.npy", "--log-std");
  expect_refused(enc + " --stream --out " + dir + "/m.npy", "--log-std");
}

TEST_F(OutputOverModelFiles, AudioDecodeOneShotAndStream) {
  const std::string dec = "audio-decode --quiet --checkpoint " + h3 + " --latent " + dir + "/z.npy";
  expect_refused(dec, "--out");
  expect_refused(dec + " --stream", "--out");
  // The checkpoint folder itself may take a new output file.
  const test::CliRun r = test::run_meshnn(dec + " --out " + h3 + "/decoded.wav");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(h3 + "/decoded.wav"));
}

TEST_F(OutputOverModelFiles, TwoOutputsCannotShareAFile) {
  const test::CliRun r =
      test::run_meshnn("audio-encode --quiet --checkpoint " + h3 + " --wav " + dir +
                       "/in.wav --out " + dir + "/m.npy --log-std " + dir + "/./m.npy");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("two outputs cannot share a file"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/m.npy"));
}

// BigVGAN: the config.json beside a checkpoint file (read although no option names it) and the
// weights, by any spelling.
TEST_F(OutputOverModelFiles, VocodeConfigBesideTheCheckpoint) {
  const std::string v = dir + "/voc";
  fs::create_directory(v);
  auto file = io::SafetensorsFile::open(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  fs::copy_file(test::fixture_path("bigvgan_v2_24k_small.safetensors"),
                v + "/bigvgan_generator.safetensors");
  {
    std::ofstream cfg(v + "/config.json");
    cfg << file.metadata().at("config");
  }
  io::save_npy(dir + "/mel.npy", test::random_tensor({100, 8}, DType::f32, 37));
  const std::string cfg_bytes = bytes_of(v + "/config.json");
  const std::string w_bytes = bytes_of(v + "/bigvgan_generator.safetensors");
  // (vocode takes the checkpoint file; the folder form is AudioModel::files' too, see below.)
  for (const std::string& ckpt : {v + "/bigvgan_generator.safetensors"})
    for (const std::string& out :
         {v + "/config.json", v + "/./bigvgan_generator.safetensors", v + "/../voc/config.json"}) {
      const test::CliRun r = test::run_meshnn("vocode --checkpoint " + ckpt + " --mel " + dir +
                                              "/mel.npy --out " + out);
      EXPECT_EQ(r.code, 1) << ckpt << " → " << out << "\n" << r.output;
      EXPECT_NE(r.output.find("same file as the input"), std::string::npos) << r.output;
    }
  EXPECT_EQ(bytes_of(v + "/config.json"), cfg_bytes);
  EXPECT_EQ(bytes_of(v + "/bigvgan_generator.safetensors"), w_bytes);
}

// The registry's list of the files a path makes load() read, from names alone.
TEST(AudioModelFiles, ListsWhatLoadOpens) {
  const std::string h3 = test::fixture_path("minimax_h3_tiny");
  const std::vector<std::string> f = AudioModel::files(h3);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(fs::path(f[0]).filename(), "config.json");
  EXPECT_EQ(fs::path(f[1]).filename(), "diffusion_pytorch_model.safetensors");
  const std::string ltx = test::fixture_path("ltx23_small.safetensors");
  EXPECT_EQ(AudioModel::files(ltx), std::vector<std::string>{ltx});
  AudioModelOptions o;
  o.config_path = "/elsewhere/config.json";
  const std::string bv = test::fixture_path("bigvgan_v2_24k_small.safetensors");
  const std::vector<std::string> g = AudioModel::files(bv, o);
  EXPECT_NE(std::find(g.begin(), g.end(), bv), g.end());
  EXPECT_NE(std::find(g.begin(), g.end(), o.config_path), g.end());
  EXPECT_THROW(AudioModel::files(test::fixture_path("io_sample_f32.npy")), InvalidArgument);
  // NVIDIA's folder as published: bigvgan_generator.pt and config.json inside it.
  const std::string nv = test::fixture_path("bigvgan_nvidia_folder");
  EXPECT_EQ(AudioModel::files(nv),
            (std::vector<std::string>{nv + "/bigvgan_generator.pt", nv + "/config.json"}));
  // A converted folder: its safetensors weights come first, as load() picks them.
  const std::string dir = test::scratch_dir();
  fs::copy_file(nv + "/config.json", dir + "/config.json");
  fs::copy_file(nv + "/bigvgan_generator.pt", dir + "/bigvgan_generator.pt");
  fs::copy_file(bv, dir + "/bigvgan_generator.safetensors");
  EXPECT_EQ(
      AudioModel::files(dir),
      (std::vector<std::string>{dir + "/bigvgan_generator.safetensors", dir + "/config.json"}));
}

}  // namespace
}  // namespace meshnn
