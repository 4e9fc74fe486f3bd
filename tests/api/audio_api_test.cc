// The public audio API: one loaded model, runners per device and per thread.
//  - concurrent decodes of different latents over one loaded decoder equal serial decodes;
//  - a 1×2 local mesh equals 1×1; warm calls equal cold ones;
//  - bad inputs and impossible meshes are rejected before any work.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "models/bigvgan/typed_model.h"
#include "models/ltx/typed_model.h"
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
  const LtxAudioDecoder dec = LtxAudioDecoder::load(test::fixture_path("ltx23_small.safetensors"));
  const Tensor a = test::random_normal({1, 8, 9, 16}, 101),
               b = test::random_normal({1, 8, 12, 16}, 102);
  const Tensor serial_a = dec.decode(a, on("1x1")), serial_b = dec.decode(b, on("1x1"));
  ASSERT_EQ(serial_a.shape(), (Shape{1, 2, dec.output_samples(9)}));
  Tensor par_a, par_b;
  for (int round = 0; round < 2; ++round) {  // the second round runs on pooled (warm) runners
    std::thread ta([&] { par_a = dec.decode(a, on("1x1")); });
    std::thread tb([&] { par_b = dec.decode(b, on("1x1")); });
    ta.join();
    tb.join();
    EXPECT_TRUE(same_bytes(par_a, serial_a)) << "round " << round;
    EXPECT_TRUE(same_bytes(par_b, serial_b)) << "round " << round;
  }
}

TEST(AudioApi, MeshEqualsSingleDevice) {
  const LtxAudioDecoder dec = LtxAudioDecoder::load(test::fixture_path("ltx23_small.safetensors"));
  const Tensor x = test::random_normal({1, 8, 10, 16}, 103);
  const Tensor one = dec.decode(x, on("1x1"));
  const Tensor two = dec.decode(x, on("1x2"));
  const test::CompareStats st = test::compare(two, one);
  EXPECT_LE(st.max_abs, 1e-5) << "1x2 vs 1x1";
  EXPECT_TRUE(same_bytes(dec.decode(x, on("1x1")), one)) << "warm vs cold";
}

TEST(AudioApi, ProgressReportsEveryStage) {
  const LtxAudioDecoder dec = LtxAudioDecoder::load(test::fixture_path("ltx23_small.safetensors"));
  std::vector<std::string> seen;
  RunOptions run = on("1x2");
  run.progress = [&](int done, int total, const std::string& what) {
    EXPECT_EQ(total, 3);
    EXPECT_EQ(done, static_cast<int>(seen.size()) + 1);
    seen.push_back(what);
  };
  dec.decode(test::random_normal({1, 8, 6, 16}, 104), run);
  EXPECT_EQ(seen,
            (std::vector<std::string>{"mel-VAE decoder", "neural vocoder", "bandwidth extension"}));
}

TEST(AudioApi, RejectsBadInputBeforeWork) {
  const LtxAudioDecoder dec = LtxAudioDecoder::load(test::fixture_path("ltx23_small.safetensors"));
  EXPECT_THROW(dec.decode(test::random_normal({8, 6, 16}, 1)), ShapeError);
  EXPECT_THROW(dec.decode(test::random_normal({1, 8, 6, 16}, 1).to(DType::bf16)), ShapeError);
  EXPECT_THROW(dec.decode(test::random_normal({1, 8, 3, 16}, 1), on("1x4")), ShapeError);
  EXPECT_THROW(LtxAudioDecoder::check_run(test::random_normal({1, 8, 3, 16}, 1), on("1x4")),
               ShapeError);
  EXPECT_THROW(dec.decode(test::random_normal({1, 8, 6, 16}, 1), on("1x2", -1)), InvalidArgument);
  EXPECT_THROW(dec.decode(test::random_normal({1, 8, 6, 16}, 1), on("banana")), InvalidArgument);
  Tensor nan = test::random_normal({1, 8, 6, 16}, 2);
  nan.data<float>()[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(dec.decode(nan, on("1x1")), InvalidArgument);
}

TEST(AudioApi, VocoderMeshEqualsSingleDevice) {
  const BigVganVocoder voc =
      BigVganVocoder::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const Tensor mel = test::random_normal({1, voc.num_mels(), 40}, 105, 0.5f);
  const Tensor one = voc.vocode(mel, on("1x1"));
  ASSERT_EQ(one.shape(), (Shape{1, 1, 40 * voc.hop_length()}));
  const Tensor two = voc.vocode(mel, on("1x2"));
  EXPECT_LE(test::compare(two, one).max_abs, 1e-5);
  EXPECT_THROW(voc.vocode(test::random_normal({1, voc.num_mels() + 1, 40}, 1)), ShapeError);
}

}  // namespace
}  // namespace meshnn
