// A model defined outside src/models reaches the command line: meshnn-toy is the meshnn CLI built
// with the toy VAE of tests/support/toy_model registered beside the built-in families
// (CMakeLists.txt), and `audio-decode` (one shot, on a 1x2 mesh, streamed) and `audio-encode` run
// it with no line of their own, giving what AudioModel gives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "meshnn/audio_model.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"
#include "support/cli_run.h"
#include "support/golden.h"
#include "support/scratch_dir.h"
#include "support/toy_model/config.h"
#include "support/toy_model/weights.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

test::CliRun run_toy(const std::string& args) {
  return test::shell(std::string(MESHNN_BINARY_DIR) + "/meshnn-toy " + args);
}

RunOptions one_device() {
  RunOptions r;
  r.mesh = "1x1";
  r.threads = 1;
  return r;
}

TEST(ToyModelCli, AudioDecodeAndEncodeRunTheToyModel) {
  const test::ScratchDir f;
  const std::string model = f.at("toy");
  test::toy::write_random_folder(model, test::toy::Config{}, 77);
  const AudioModel m = AudioModel::load(model);
  const Tensor z = test::random_normal({2, m.input_spec().shape[1], 21}, 78, 0.5f);
  io::save_npy(f.at("z.npy"), z);
  const Tensor want = m.run(z, one_device());  // (2, 1, S): one WAV channel per item
  const int64_t S = want.dim(2);
  for (const std::string extra : {"--mesh 1x1", "--mesh 1x2", "--stream"}) {
    const test::CliRun r = run_toy("audio-decode --checkpoint " + model + " --latent " +
                                   f.at("z.npy") + " --out " + f.at("y.wav") + " --quiet " + extra);
    ASSERT_EQ(r.code, 0) << extra << ": " << r.output;
    const io::WavAudio wav = io::read_wav(f.at("y.wav"));
    EXPECT_EQ(wav.sample_rate, m.output_spec().sample_rate);
    EXPECT_TRUE(test::close_rel_l2(wav.samples, want.reshape({2, S}), 2e-6, extra));
  }
  const test::CliRun r = run_toy("audio-encode --checkpoint " + model + " --wav " + f.at("y.wav") +
                                 " --out " + f.at("mean.npy") + " --log-std " + f.at("logs.npy"));
  ASSERT_EQ(r.code, 0) << r.output;
  Tensor logs;
  const Tensor mean =
      m.encode(io::channels_as_batch(io::read_wav(f.at("y.wav")).samples), one_device(), &logs);
  EXPECT_TRUE(test::close_rel_l2(io::load_npy(f.at("mean.npy")), mean, 1e-6, "encode mean"));
  EXPECT_TRUE(test::close_rel_l2(io::load_npy(f.at("logs.npy")), logs, 1e-6, "encode log std"));
}

}  // namespace
}  // namespace meshnn
