// Receptive fields from the model graphs: the look-ahead and history a streaming decoder uses,
// checked against the decode itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "graph/graph.h"
#include "meshnn/io/safetensors.h"
#include "models/ltx/audio_decoder.h"
#include "runtime/chunked.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/ltx_stages.h"

namespace meshnn::models {
namespace {

// The reach of the decode, in latent frames, from the model's graph (graph/graph.h): the
// look-ahead a stream waits for and the history a window needs.
struct LatentReach {
  int64_t left, right;
};
LatentReach latent_reach(const LtxAudioDecoder& dec) {
  const graph::Reach r = dec.graph()->reach();
  return {r.left.ceil(), r.right.ceil()};
}

TEST(ReceptiveField, StageReachesOfTheFixtures) {
  for (const char* fixture : {"ltx23_small.safetensors", "ltx2_small.safetensors"}) {
    auto file = io::SafetensorsFile::open(test::fixture_path(fixture));
    auto dec = LtxAudioDecoder::load(file, Precision::fp32);
    const std::vector<runtime::StageContext> c =
        runtime::chunk_context(LtxDecoderAccess::chunk_chain(*dec));
    const runtime::StageContext bwe = c.size() == 3 ? c[2] : runtime::StageContext{};
    const LatentReach all = latent_reach(*dec);
    std::printf(
        "%s: mel-VAE %lld | %lld latents, vocoder %lld | %lld mels, BWE %lld | %lld mels, "
        "whole decode %lld | %lld latents\n",
        fixture, static_cast<long long>(c[0].left), static_cast<long long>(c[0].right),
        static_cast<long long>(c[1].left), static_cast<long long>(c[1].right),
        static_cast<long long>(bwe.left), static_cast<long long>(bwe.right),
        static_cast<long long>(all.left), static_cast<long long>(all.right));
    // The mel-VAE reads back only; the nets after it read both ways; mel rows are 4 per latent.
    EXPECT_GT(c[0].left, 0);
    EXPECT_EQ(c[0].right, 0);
    EXPECT_GT(c[1].left, 0);
    EXPECT_GT(c[1].right, 0);
    EXPECT_GE(all.left, c[0].left);
    const int64_t voc = std::max(c[1].left, c[1].right);
    EXPECT_GE(all.right, (voc + 3) / 4);
    EXPECT_LE(all.right, (voc + bwe.right + 3) / 4 + 1);
  }
}

// Decoding the fixture: output rows aligned with latents ≤ a do not change when every latent past
// a + right changes, and rows aligned with latents ≥ a do not change when every latent before
// a − left changes; changing the latent right after a (or right before) does change them.
void check_fields(const std::string& fixture) {
  auto file = io::SafetensorsFile::open(test::fixture_path(fixture));
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  const LatentReach rf = latent_reach(*dec);
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
