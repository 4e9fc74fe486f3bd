// The public streaming API: pushes cut anywhere (down to one frame) and a flush equal the one-shot
// call, on one device and as a 1x2 pipeline; the look-ahead is what the stream really holds back;
// bad input is refused with typed errors.
#include <gtest/gtest.h>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "support/golden.h"
#include "support/stream_test_util.h"

namespace meshnn {
namespace {

using test::max_abs_diff;
using test::push_cut;
using test::random_cuts;
using test::random_rows;

RunOptions one_device() {
  RunOptions r;
  r.mesh = "1x1";
  return r;
}

StreamOptions on_mesh(const char* mesh) {
  StreamOptions o;
  o.mesh = mesh;
  return o;
}

// The stream agrees with the one-shot call to f32 rounding (docs/streaming.md).
constexpr double kTol = 4e-6;

std::vector<std::vector<int64_t>> cut_sets(int64_t n, uint64_t seed) {
  std::vector<int64_t> ones;
  for (int64_t r = 1; r < n; ++r) ones.push_back(r);
  return {{}, random_cuts(n, 4, seed), ones};
}

TEST(StreamingApi, BigVganEqualsVocodeOnOneDeviceAndPipeline) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const int64_t T = 29;
  const Tensor mel = random_rows({1, voc.input_spec().shape[1], T}, 41, -8.f, 1.f);
  const Tensor ref = voc.run(mel, one_device());
  for (const char* mesh : {"1x1", "1x2"}) {
    AudioStream s = voc.stream(on_mesh(mesh));
    EXPECT_EQ(s.mesh(), mesh);
    EXPECT_EQ(s.sample_rate(), voc.output_spec().sample_rate);
    for (const auto& cuts : cut_sets(T, 3)) {
      const Tensor y = push_cut(s, mel, cuts, 2, 2);
      EXPECT_LE(max_abs_diff(y, ref), kTol) << mesh << ", " << cuts.size() << " cuts";
      EXPECT_EQ(s.frames_pushed(), 0);  // flush starts a new stream
    }
  }
}

TEST(StreamingApi, LtxDecoderEqualsDecodeOnOneDeviceAndPipeline) {
  for (const char* ckpt : {"ltx23_small.safetensors", "ltx2_small.safetensors"}) {
    const AudioModel dec = AudioModel::load(test::fixture_path(ckpt));
    const int64_t T = 7;
    const Tensor latent = random_rows({1, 8, T, 16}, 43, -2.f, 2.f);
    const Tensor ref = dec.run(latent, one_device());
    for (const char* mesh : {"1x1", "1x2"}) {
      AudioStream s = dec.stream(on_mesh(mesh));
      for (const auto& cuts : cut_sets(T, 5)) {
        const Tensor y = push_cut(s, latent, cuts, 2, 2);
        EXPECT_LE(max_abs_diff(y, ref), kTol) << ckpt << " " << mesh << ", " << cuts.size();
      }
    }
  }
}

// After n pushed frames every sample of frames [0, n − lookahead) is out, and no sample beyond
// frame n − lookahead + 1: the stated look-ahead is the real one.
TEST(StreamingApi, LookaheadIsWhatTheStreamHoldsBack) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_44k_small.safetensors"));
  AudioStream s = voc.stream();
  const int64_t L = s.lookahead_frames(), hop = s.samples_per_frame();
  EXPECT_GT(L, 0);
  EXPECT_NEAR(s.lookahead_ms(), 1e3 * L * hop / voc.output_spec().sample_rate, 1e-9);
  const int64_t n = L + 6;
  int64_t got = 0;
  for (int64_t i = 0; i < n; ++i)
    got += s.push(random_rows({1, voc.input_spec().shape[1], 1}, 50 + i, -8.f, 1.f)).dim(2);
  EXPECT_GE(got, (n - L) * hop);
  EXPECT_LT(got, (n - L + 1) * hop);
  EXPECT_EQ(s.samples_returned(), got);
  EXPECT_EQ(got + s.flush().dim(2), n * hop);
}

TEST(StreamingApi, ResetDropsTheStreamAndStartsAfresh) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_base_24k_small.safetensors"));
  const Tensor mel = random_rows({1, voc.input_spec().shape[1], 12}, 61, -8.f, 1.f);
  const Tensor ref = voc.run(mel, one_device());
  AudioStream s = voc.stream();
  s.push(random_rows({1, voc.input_spec().shape[1], 9}, 62, -8.f, 1.f));
  s.reset();
  EXPECT_EQ(s.frames_pushed(), 0);
  EXPECT_LE(max_abs_diff(push_cut(s, mel, {5}, 2, 2), ref), kTol);
}

TEST(StreamingApi, RefusesBadInputAndMeshes) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  AudioStream s = voc.stream();
  EXPECT_THROW(s.push(random_rows({1, voc.input_spec().shape[1] + 1, 3}, 1)), ShapeError);
  EXPECT_THROW(s.push(random_rows({voc.input_spec().shape[1], 3}, 1)), ShapeError);
  Tensor nan = random_rows({1, voc.input_spec().shape[1], 2}, 2);
  nan.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(s.push(nan), InvalidArgument);
  EXPECT_THROW(voc.stream(on_mesh("2x1")), InvalidArgument);
  EXPECT_THROW(voc.stream(on_mesh("banana")), InvalidArgument);
  StreamOptions bad_threads;
  bad_threads.threads = -1;
  EXPECT_THROW(voc.stream(bad_threads), InvalidArgument);
}

}  // namespace
}  // namespace meshnn
