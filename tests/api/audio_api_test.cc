// The public audio API: one loaded model, runners per device and per thread.
//  - concurrent decodes of different latents over one loaded decoder equal serial decodes;
//  - a 1×2 local mesh equals 1×1; warm calls equal cold ones;
//  - bad inputs and impossible meshes are rejected before any work.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn {
namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

RunOptions on(const std::string& mesh, int threads = 1) {
  RunOptions r;
  r.mesh = mesh;
  r.threads = threads;
  return r;
}

TEST(AudioApi, ConcurrentDecodesOverOneLoadedDecoderEqualSerial) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  const Tensor a = test::random_normal({1, 8, 9, 16}, 101),
               b = test::random_normal({1, 8, 12, 16}, 102);
  const Tensor serial_a = dec.run(a, on("1x1")), serial_b = dec.run(b, on("1x1"));
  ASSERT_EQ(serial_a.shape(), (Shape{1, 2, dec.output_samples(9)}));
  Tensor par_a, par_b;
  for (int round = 0; round < 2; ++round) {  // the second round runs on pooled (warm) runners
    std::thread ta([&] { par_a = dec.run(a, on("1x1")); });
    std::thread tb([&] { par_b = dec.run(b, on("1x1")); });
    ta.join();
    tb.join();
    EXPECT_TRUE(same_bytes(par_a, serial_a)) << "round " << round;
    EXPECT_TRUE(same_bytes(par_b, serial_b)) << "round " << round;
  }
}

TEST(AudioApi, MeshEqualsSingleDevice) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  const Tensor x = test::random_normal({1, 8, 10, 16}, 103);
  const Tensor one = dec.run(x, on("1x1"));
  const Tensor two = dec.run(x, on("1x2"));
  const test::CompareStats st = test::compare(two, one);
  EXPECT_LE(st.max_abs, 1e-5) << "1x2 vs 1x1";
  EXPECT_TRUE(same_bytes(dec.run(x, on("1x1")), one)) << "warm vs cold";
}

TEST(AudioApi, ProgressReportsEveryStage) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  std::vector<std::string> seen;
  RunOptions run = on("1x2");
  run.progress = [&](int done, int total, const std::string& what) {
    EXPECT_EQ(total, 3);
    EXPECT_EQ(done, static_cast<int>(seen.size()) + 1);
    seen.push_back(what);
  };
  dec.run(test::random_normal({1, 8, 6, 16}, 104), run);
  EXPECT_EQ(seen,
            (std::vector<std::string>{"mel-VAE decoder", "neural vocoder", "bandwidth extension"}));
}

TEST(AudioApi, RejectsBadInputBeforeWork) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  EXPECT_THROW(dec.run(test::random_normal({6, 16}, 1)), ShapeError);
  EXPECT_THROW(dec.run(test::random_normal({1, 8, 6, 16}, 1).to(DType::bf16)), ShapeError);
  EXPECT_THROW(dec.run(test::random_normal({1, 8, 3, 16}, 1), on("1x4")), ShapeError);
  EXPECT_THROW(AudioModel::check_input(test::fixture_path("ltx23_small.safetensors"), {1, 8, 3, 16},
                                       on("1x4")),
               ShapeError);
  EXPECT_THROW(dec.run(test::random_normal({1, 8, 6, 16}, 1), on("1x2", -1)), InvalidArgument);
  EXPECT_THROW(dec.run(test::random_normal({1, 8, 6, 16}, 1), on("banana")), InvalidArgument);
  Tensor nan = test::random_normal({1, 8, 6, 16}, 2);
  nan.data<float>()[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(dec.run(nan, on("1x1")), InvalidArgument);
}

TEST(AudioApi, VocoderMeshEqualsSingleDevice) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const int64_t mels = voc.input_spec().shape[1];
  const Tensor mel = test::random_normal({1, mels, 40}, 105, 0.5f);
  const Tensor one = voc.run(mel, on("1x1"));
  ASSERT_EQ(one.shape(), (Shape{1, 1, voc.output_samples(40)}));
  const Tensor two = voc.run(mel, on("1x2"));
  EXPECT_LE(test::compare(two, one).max_abs, 1e-5);
  EXPECT_THROW(voc.run(test::random_normal({1, mels + 1, 40}, 1)), ShapeError);
}

}  // namespace
}  // namespace meshnn
