// The level (energy per duration) of the decoders at several input lengths, odd ones included:
// a decoder can lose its level only at some lengths (tt-metal saw a 16.6x energy drop at 124
// frames that an absolute RMS floor passed). Each length's output is compared segment by segment
// (meshnn verify's segment_level_db, one implementation) with the same span of the full-length
// decode, and the golden-length decode with the PyTorch golden.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cli/audio_metrics.h"
#include "io/io_test_util.h"
#include "meshnn/audio_model.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn {
namespace {

// The level of b against reference a (planar (1, C, ·) each) over their first n samples, cut into
// `segments`: the segment value furthest from 0 dB over every channel (0 when a is silent).
double worst_level_db(const Tensor& a, const Tensor& b, int64_t n, int64_t segments) {
  EXPECT_EQ(a.dim(1), b.dim(1));
  EXPECT_GE(a.dim(2), n);
  EXPECT_GE(b.dim(2), n);
  double worst = 0;
  for (int64_t c = 0; c < a.dim(1); ++c) {
    const float* pa = a.data<float>() + c * a.dim(2);
    const float* pb = b.data<float>() + c * b.dim(2);
    for (double v : cli::segment_level_db(pa, pb, n, 1, segments, 1e-6))
      if (!std::isnan(v) && !(std::abs(v) <= std::abs(worst))) worst = v;
  }
  return worst;
}

// Uniform random values in [lo, hi) (seeded), f32.
Tensor uniform(const Shape& shape, float lo, float hi, uint32_t seed) {
  Tensor t = test::random_tensor(shape, DType::f32, seed);  // in [-3, 3)
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = lo + (hi - lo) * (p[i] + 3.f) / 6.f;
  return t;
}

TEST(LevelAtLengths, Ltx23) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  // The golden length against PyTorch.
  const auto io = test::load_fixture("ltx23_small_io.safetensors");
  const Tensor golden = io.at("output").to(DType::f32);
  const Tensor got = dec.run(io.at("input.latent").to(DType::f32));
  EXPECT_LT(std::abs(worst_level_db(golden, got, golden.dim(2), 4)), 0.01);
  // Random latents of 41 frames; prefixes of 7, 20 and 33 frames.
  const Tensor z = uniform({1, 8, 41, 16}, 0.f, 1.f, 351);
  const Tensor full = dec.run(z);
  for (int64_t L : {7, 20, 33}) {
    const Tensor part = dec.run(z.narrow(2, 0, L).clone());
    ASSERT_EQ(part.dim(2), dec.output_samples(L));
    // Away from the cut (the last 4 frames see the missing context): the same level.
    const double away = worst_level_db(full, part, dec.output_samples(L - 4), 8);
    // The whole prefix, tail included: the level per duration holds within 1 dB.
    const double whole = worst_level_db(full, part, part.dim(2), 1);
    std::printf("LTX-2.3 %lld frames: level vs full length %+.4f dB (tail included %+.3f dB)\n",
                static_cast<long long>(L), away, whole);
    EXPECT_LT(std::abs(away), 0.05) << L << " frames";
    EXPECT_LT(std::abs(whole), 1.0) << L << " frames";
  }
}

TEST(LevelAtLengths, BigVgan) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const auto io = test::load_fixture("bigvgan_v2_24k_small.safetensors");
  const Tensor golden = io.at("output").to(DType::f32);
  const Tensor got = voc.run(io.at("input.mel").to(DType::f32));
  EXPECT_LT(std::abs(worst_level_db(golden, got, golden.dim(2), 4)), 0.01);
  const int64_t hop = voc.output_samples(1);
  const Tensor mel = uniform({1, voc.input_spec().shape[1], 61}, -6.f, 1.f, 352);
  const Tensor full = voc.run(mel);
  for (int64_t L : {9, 30, 61}) {
    const Tensor part = voc.run(mel.narrow(2, 0, L).clone());
    ASSERT_EQ(part.dim(2), L * hop);
    const double away = worst_level_db(full, part, (L - 4) * hop, 8);
    const double whole = worst_level_db(full, part, part.dim(2), 1);
    std::printf("BigVGAN %lld mel frames: level vs full length %+.4f dB (tail included %+.3f dB)\n",
                static_cast<long long>(L), away, whole);
    // BigVGAN is not causal: a few frames before the cut still see it (measured −0.24 dB at 9
    // frames, −0.13 dB at 30, 0 at full length); a lost level is several dB.
    EXPECT_LT(std::abs(away), 0.5) << L << " frames";
    EXPECT_LT(std::abs(whole), 1.0) << L << " frames";
  }
}

}  // namespace
}  // namespace meshnn
