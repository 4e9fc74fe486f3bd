// Chunked LTX audio decode (bounded memory): decode_chunked must equal the one-shot decode to f32
// rounding, over the whole output and at every chunk seam, for LTX-2.3 (with BWE) and LTX-2.
#include <gtest/gtest.h>

#include <cstdio>

#include "meshnn/io/safetensors.h"
#include "models/ltx_audio_decoder.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::models {
namespace {

int64_t mel_start(int64_t t) { return t == 0 ? 0 : 4 * t - 3; }

// Whole output and ±`seam` samples around every chunk boundary.
void expect_chunked_equal(LtxAudioDecoder& dec, const Tensor& latent, int64_t chunk, const std::string& what) {
  const Tensor ref = dec.decode(latent);
  int calls = 0, last_total = 0;
  const Tensor got = dec.decode_chunked(latent, chunk, [&](int i, int n, const char*) {
    EXPECT_EQ(i, calls + 1);
    ++calls;
    last_total = n;
  });
  const int64_t T = latent.dim(2);
  const int64_t chunks = (T + chunk - 1) / chunk;
  EXPECT_EQ(calls, chunks) << what;
  EXPECT_EQ(last_total, chunks) << what;
  ASSERT_EQ(got.shape(), ref.shape()) << what;
  const test::CompareStats st = test::compare(got, ref);
  std::printf("%s chunk %lld: rel L2 %.3g, max |d| %.3g\n", what.c_str(), static_cast<long long>(chunk),
              st.rel_l2, st.max_abs);
  EXPECT_TRUE(test::close_rel_l2(got, ref, 1e-6, what + " chunk " + std::to_string(chunk)));
  const int64_t per_mel = ref.dim(1) / (4 * T - 3), seam = 2 * per_mel;
  for (int64_t t = chunk; t < T; t += chunk) {
    const int64_t b = mel_start(t) * per_mel, lo = std::max<int64_t>(0, b - seam);
    const int64_t len = std::min<int64_t>(2 * seam, ref.dim(1) - lo);
    EXPECT_TRUE(test::close_rel_l2(got.narrow(1, lo, len), ref.narrow(1, lo, len), 1e-6,
                                   what + " chunk " + std::to_string(chunk) + " seam at latent " +
                                       std::to_string(t)));
  }
}

TEST(LtxChunked, Ltx23EqualsOneShot) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  const auto ctx = dec->chunk_context();
  std::printf("context: stage A %lld latents, vocoder ±%lld mels, BWE %lld | %lld mels\n",
              static_cast<long long>(ctx.stage_a_latents), static_cast<long long>(ctx.stage_b_mels),
              static_cast<long long>(ctx.stage_c_left), static_cast<long long>(ctx.stage_c_right));
  const Tensor latent = test::random_normal({1, 8, 40, 16}, 2024, 0.8f);
  for (int64_t chunk : {5, 8, 13, 40, 64}) expect_chunked_equal(*dec, latent, chunk, "ltx23");
}

TEST(LtxChunked, Ltx23ShortAndBatched) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  // T = 1 (a single mel frame), a chunk of 1 (every latent a seam), and batch 2.
  expect_chunked_equal(*dec, test::random_normal({1, 8, 1, 16}, 5, 0.8f), 1, "ltx23 T=1");
  expect_chunked_equal(*dec, test::random_normal({1, 8, 7, 16}, 6, 0.8f), 1, "ltx23 T=7");
  expect_chunked_equal(*dec, test::random_normal({2, 8, 17, 16}, 7, 0.8f), 6, "ltx23 B=2");
}

TEST(LtxChunked, Ltx2EqualsOneShot) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx2_small.safetensors"));
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  ASSERT_EQ(dec->config().version, LtxAudioConfig::Version::ltx2);
  EXPECT_EQ(dec->chunk_context().stage_c_left, 0);
  const Tensor latent = test::random_normal({1, 8, 40, 16}, 99, 0.8f);
  for (int64_t chunk : {5, 8, 13}) expect_chunked_equal(*dec, latent, chunk, "ltx2");
}

TEST(LtxChunked, BadInputIsAClearError) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  EXPECT_THROW(dec->decode_chunked(test::random_normal({1, 8, 4, 16}, 1), 0), InvalidArgument);
  EXPECT_THROW(dec->decode_chunked(Tensor({1, 7, 3, 16}), 2), ShapeError);
}

}  // namespace
}  // namespace meshnn::models
