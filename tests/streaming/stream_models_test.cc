// Exact streaming of the audio models: pushing the input in pieces (random cut points, 1-row
// pushes, one big push) and flushing gives the one-shot forward.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "graph/graph.h"
#include "models/bigvgan/model.h"
#include "models/ltx/audio_decoder.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/ltx_stages.h"
#include "support/stream_test_util.h"

namespace meshnn::graph {
namespace {

using test::max_abs_diff;
using test::push_cut;
using test::random_cuts;
using test::random_rows;

// Models: every conv row agrees with the one-shot to f32 rounding (see stream_ops_test.cc), and
// those differences pass through the chain.
constexpr double kModelTol = 4e-6;

// Both layouts of a graph: as built (lowest latency), and as a pipeline cuts it.
NodePtr laid_out(NodePtr g, bool pipeline) {
  return pipeline ? pipeline_layout(std::move(g)) : std::move(g);
}

class BigVganStream : public ::testing::TestWithParam<const char*> {};

TEST_P(BigVganStream, AnyCutEqualsOneShot) {
  auto file = io::SafetensorsFile::open(test::fixture_path(GetParam()));
  auto model = models::BigVgan::load(file, "", Precision::fp32);
  const int64_t M = model->config().num_mels;
  const int64_t T = 41;
  const Tensor mel = random_rows({1, M, T}, 7, -8.f, 1.f);
  const Tensor ref = model->vocode_mel(mel);  // (1, T·hop, 1)
  const Tensor rows = models::mel_rows(mel);
  std::vector<std::vector<int64_t>> cut_sets = {{}, random_cuts(T, 5, 1), random_cuts(T, 12, 2)};
  std::vector<int64_t> ones;
  for (int64_t r = 1; r < T; ++r) ones.push_back(r);
  cut_sets.push_back(ones);
  for (bool layout : {false, true}) {
    auto op = laid_out(model->graph(), layout);
    for (const auto& cuts : cut_sets) {
      const Tensor y = push_cut(*op, rows, cuts);
      EXPECT_LE(max_abs_diff(y.reshape(ref.shape()), ref), kModelTol)
          << cuts.size() << " cuts, layout " << int(layout);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Configs, BigVganStream,
                         ::testing::Values("bigvgan_v2_24k_small.safetensors",
                                           "bigvgan_v2_44k_small.safetensors",
                                           "bigvgan_base_24k_small.safetensors"));

// The LTX chains (LTX-2.3: mel-VAE → BigVGAN v2 → BWE; LTX-2: mel-VAE → HiFi-GAN), whole decoder
// and vocoder alone, against the one-shot decode.
class LtxStream : public ::testing::TestWithParam<const char*> {};

TEST_P(LtxStream, DecoderAnyCutEqualsOneShot) {
  auto file = io::SafetensorsFile::open(test::fixture_path(GetParam()));
  auto model = models::LtxAudioDecoder::load(file, Precision::fp32);
  const int64_t T = 9;
  const Tensor latent = random_rows({1, 8, T, 16}, 17, -2.f, 2.f);
  const Tensor ref = model->decode(latent);  // (1, samples, 2)
  const Tensor rows = models::latent_to_channels_last(latent);
  std::vector<int64_t> ones;
  for (int64_t r = 1; r < T; ++r) ones.push_back(r);
  for (bool layout : {false, true}) {
    auto op = laid_out(model->graph(), layout);
    for (const auto& cuts : {std::vector<int64_t>{}, random_cuts(T, 3, 5), ones}) {
      const Tensor y = push_cut(*op, rows, cuts);
      EXPECT_LE(max_abs_diff(y, ref), kModelTol) << cuts.size() << " cuts, layout " << int(layout);
    }
  }
}

TEST_P(LtxStream, VocoderAnyCutEqualsOneShot) {
  auto file = io::SafetensorsFile::open(test::fixture_path(GetParam()));
  auto model = models::LtxAudioDecoder::load(file, Precision::fp32);
  const int64_t M = 23;
  const Tensor mel = random_rows({1, M, 128}, 19, -6.f, 1.f);
  Tensor ref = models::LtxDecoderAccess::stage_b(*model, mel, TimeShard(), M);
  if (model->config().version == models::LtxAudioConfig::Version::ltx23)
    ref = models::LtxDecoderAccess::stage_c(*model, ref, TimeShard(), ref.dim(1)).out;
  for (bool layout : {false, true}) {
    auto op = laid_out(model->vocoder_graph(), layout);
    for (const auto& cuts : {std::vector<int64_t>{}, random_cuts(M, 4, 6), random_cuts(M, 22, 7)}) {
      const Tensor y = push_cut(*op, mel, cuts);
      EXPECT_LE(max_abs_diff(y, ref), kModelTol) << cuts.size() << " cuts, layout " << int(layout);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Chains, LtxStream,
                         ::testing::Values("ltx23_small.safetensors", "ltx2_small.safetensors"));

}  // namespace
}  // namespace meshnn::graph
