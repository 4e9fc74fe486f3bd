// Receptive fields from the model tables: the look-ahead and history a streaming decoder uses.
#include <gtest/gtest.h>

#include "meshnn/io/safetensors.h"
#include "models/audio_description.h"
#include "models/ltx_audio_decoder.h"
#include "models/ltx_random.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::models {
namespace {

TEST(ReceptiveField, ReferenceLtx23) {
  const LtxAudioConfig cfg = parse_ltx_audio_config(ltx23_reference_config(), "reference");
  // The mel-VAE is causal in latents (mel row m ↔ latent ⌈m/4⌉); the nets are two-sided.
  const ReceptiveField a = mel_vae_receptive_field(cfg.vae);
  EXPECT_EQ(a.right, 0);
  EXPECT_GT(a.left, 0);
  EXPECT_EQ(mel_vae_time_ratio(cfg.vae), 4);
  const ReceptiveField v = generator_receptive_field(cfg.vocoder);
  EXPECT_EQ(v.left, v.right);
  const ReceptiveField c = bwe_receptive_field(cfg.bwe, cfg.vocoder.hop());
  const ReceptiveField all = ltx_receptive_field(cfg);
  EXPECT_EQ(all.right, (v.right + c.right + 3) / 4);
  EXPECT_EQ(all.left, a.left + (v.left + c.left + 3) / 4);
  std::printf(
      "LTX-2.3: mel-VAE %lld | %lld latents, vocoder ±%lld mels, BWE %lld | %lld mels, "
      "whole decode %lld | %lld latents\n",
      static_cast<long long>(a.left), static_cast<long long>(a.right),
      static_cast<long long>(v.left), static_cast<long long>(c.left),
      static_cast<long long>(c.right), static_cast<long long>(all.left),
      static_cast<long long>(all.right));
}

// Decoding the fixture: output rows aligned with latents ≤ a do not change when every latent past
// a + right changes, and rows aligned with latents ≥ a do not change when every latent before
// a − left changes; changing the latent right after a (or right before) does change them.
void check_fields(const std::string& fixture) {
  auto file = io::SafetensorsFile::open(test::fixture_path(fixture));
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  const ReceptiveField rf = ltx_receptive_field(dec->config());
  const int64_t a = rf.left + 2, T = a + rf.right + 4;
  const Tensor latent = test::random_normal({1, 8, T, 16}, 31, 0.8f);
  const Tensor ref = dec->decode(latent);
  const int64_t per_mel = ref.dim(1) / (4 * T - 3);
  // Mel rows up to 4a are aligned with latents ≤ a; rows from 4a − 3 with latents ≥ a.
  const int64_t upto = (4 * a + 1) * per_mel, from = (4 * a - 3) * per_mel;
  auto changed = [&](int64_t t0, int64_t t1) {  // latent frames [t0, t1) replaced
    Tensor x = latent.clone();
    const Tensor noise = test::random_normal({1, 8, T, 16}, 77, 0.8f);
    for (int64_t c = 0; c < 8; ++c)
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t f = 0; f < 16; ++f)
          x.data<float>()[(c * T + t) * 16 + f] = noise.data<float>()[(c * T + t) * 16 + f];
    return dec->decode(x);
  };
  const Tensor future = changed(a + rf.right + 1, T);
  EXPECT_TRUE(test::close_rel_l2(future.narrow(1, 0, upto), ref.narrow(1, 0, upto), 1e-6,
                                 fixture + ": rows up to latent a, latents past a + right"));
  const Tensor past = changed(0, a - rf.left);
  const int64_t n = ref.dim(1) - from;
  EXPECT_TRUE(test::close_rel_l2(past.narrow(1, from, n), ref.narrow(1, from, n), 1e-6,
                                 fixture + ": rows from latent a, latents before a − left"));
  // Teeth: the next latent is inside the look-ahead.
  const Tensor next = changed(a + 1, a + 2);
  EXPECT_GT(test::compare(next.narrow(1, 0, upto), ref.narrow(1, 0, upto)).rel_l2, 1e-4);
}

TEST(ReceptiveField, Ltx23FixtureLookAheadAndHistoryHold) {
  check_fields("ltx23_small.safetensors");
}
TEST(ReceptiveField, Ltx2FixtureLookAheadAndHistoryHold) { check_fields("ltx2_small.safetensors"); }

}  // namespace
}  // namespace meshnn::models
