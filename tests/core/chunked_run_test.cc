// runtime::run_chunked: the windows follow from the reaches of a chain's stages and its rate
// geometry (rate·n − offset units): chains of stages with exact integer arithmetic give their
// one-shot output bit for bit in chunks (every window holds its context), every chunk's windows
// the same lengths; chains without a finite reach or a whole rate are refused; and a model that
// chunks through it (the toy of tests/support) gives its one-shot output to f32 rounding.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "runtime/chunked.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/scratch_dir.h"
#include "support/toy_model/config.h"
#include "support/toy_model/weights.h"

namespace meshnn {
namespace {

// A stage with an exact reach: output row o (rate r, aligned with input row i = ⌊o / r⌋) is
// (o mod r + 1) · Σ w[j] · x[i + j] over j in [−L, R], rows outside the input read as 0 (a window's
// cut edge is a sequence end, as in a model). Small integers: every sum is exact in f32, so a
// chunked run equals the one-shot run bit for bit exactly when every window holds its context.
struct FakeStage {
  int64_t rate = 1, left = 0, right = 0;
  std::vector<float> w;  // L + R + 1 taps
  // Its reach: row o reads ⌊o / r⌋ − L ≥ o / r − L − (r − 1) / r, up to ⌊o / r⌋ + R ≤ o / r + R.
  graph::Reach reach() const {
    graph::Reach g;
    g.left = graph::Rows(left * rate + rate - 1, rate);
    g.right = graph::Rows(right);
    g.rate = graph::Rows(rate);
    return g;
  }
  // x: (1, n) → (1, rate·n − drop), the first `drop` rows left out.
  Tensor run(const Tensor& x, int64_t drop) const {
    const int64_t n = x.dim(1);
    Tensor y = Tensor::empty({1, rate * n - drop});
    for (int64_t o = drop; o < rate * n; ++o) {
      const int64_t i = o / rate;
      float acc = 0;
      for (int64_t j = -left; j <= right; ++j)
        if (i + j >= 0 && i + j < n)
          acc += w[static_cast<size_t>(j + left)] * x.data<float>()[i + j];
      y.data<float>()[o - drop] = static_cast<float>(o % rate + 1) * acc;
    }
    return y;
  }
};

TEST(ChunkedRun, ChainsInChunksEqualTheirOneShotRunExactly) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 150; ++trial) {
    std::vector<FakeStage> stages(static_cast<size_t>(pick(1, 3)));
    runtime::ChunkChain chain;
    for (size_t s = 0; s < stages.size(); ++s) {
      FakeStage& f = stages[s];
      f.rate = pick(1, s == 0 ? 4 : 3);
      f.left = pick(0, 4);
      f.right = pick(0, 4);
      for (int64_t j = 0; j < f.left + f.right + 1; ++j) f.w.push_back(float(pick(-1, 1)));
      chain.stages.push_back(f.reach());
    }
    chain.offset = pick(0, stages[0].rate - 1);
    const int64_t frames = pick(1, 60), chunk = pick(1, 25);
    Tensor x = Tensor::empty({1, frames});
    for (int64_t i = 0; i < frames; ++i) x.data<float>()[i] = float(pick(-2, 2));
    Tensor want = stages[0].run(x, chain.offset);
    for (size_t s = 1; s < stages.size(); ++s) want = stages[s].run(want, 0);
    int calls = 0;
    const Tensor got = runtime::run_chunked(
        chain, x, 1, chunk,
        [&](const Tensor& in, const runtime::ChunkStep& step) {
          const auto k = static_cast<size_t>(step.stage);
          return stages[k].run(in, k == 0 ? chain.offset : 0);
        },
        [&](int k, int n, const char*) {
          EXPECT_EQ(k, ++calls);
          EXPECT_EQ(n, (frames + chunk - 1) / chunk);
        });
    ASSERT_EQ(got.shape(), want.shape()) << "seed " << seed << " trial " << trial;
    EXPECT_EQ(std::memcmp(got.raw(), want.raw(), static_cast<size_t>(got.numel()) * 4), 0)
        << "seed " << seed << " trial " << trial << ": " << stages.size() << " stages, offset "
        << chain.offset << ", " << frames << " frames in chunks of " << chunk;
    // Every chunk's windows the same lengths; the kept frames and units partition the input and
    // the output.
    const std::vector<runtime::ChunkWindow> ws = runtime::chunk_windows(chain, frames, chunk);
    int64_t next = 0, next_unit = 0;
    for (const runtime::ChunkWindow& w : ws) {
      EXPECT_EQ(w.keep_begin, next);
      EXPECT_EQ(w.unit_begin, next_unit);
      EXPECT_LE(w.keep_end - w.keep_begin, chunk);
      for (size_t s = 0; s < w.stages.size(); ++s)
        EXPECT_EQ(w.stages[s].length, ws.front().stages[s].length);
      next = w.keep_end;
      next_unit = w.unit_end;
    }
    EXPECT_EQ(next, frames);
    EXPECT_EQ(next_unit, stages[0].rate * frames - chain.offset);
  }
}

// Without context the same check fails: it has teeth.
TEST(ChunkedRun, AChainWhoseReachIsUnderstatedDiffers) {
  FakeStage f;
  f.rate = 2;
  f.left = 3;
  f.right = 2;
  f.w = {1, -1, 1, 1, -1, 1};
  runtime::ChunkChain chain{0, {graph::Reach{graph::Rows(0), graph::Rows(0), graph::Rows(2)}}};
  Tensor x = Tensor::empty({1, 40});
  for (int64_t i = 0; i < 40; ++i) x.data<float>()[i] = float(i % 5 - 2);
  const Tensor want = f.run(x, 0);
  const Tensor got = runtime::run_chunked(
      chain, x, 1, 7, [&](const Tensor& in, const runtime::ChunkStep&) { return f.run(in, 0); });
  EXPECT_NE(std::memcmp(got.raw(), want.raw(), static_cast<size_t>(got.numel()) * 4), 0);
}

TEST(ChunkedRun, ARunWithoutAFiniteReachOrAWholeRateIsRefused) {
  graph::Reach past;
  past.left = graph::Rows(graph::kWholePast);
  EXPECT_THROW(runtime::chunk_windows({0, {past}}, 100, 10), InvalidArgument);
  graph::Reach strided;
  strided.rate = graph::Rows(1, 4);
  EXPECT_THROW(runtime::chunk_windows({0, {strided}}, 100, 10), InvalidArgument);
  EXPECT_THROW(runtime::chunk_windows({0, {graph::Reach{}, strided}}, 100, 10), InvalidArgument);
  EXPECT_THROW(runtime::chunk_windows({0, {graph::Reach{}}}, 100, 0), InvalidArgument);
  EXPECT_THROW(runtime::chunk_windows({1, {graph::Reach{}}}, 100, 10), InvalidArgument);
  EXPECT_THROW(runtime::chunk_windows({0, {}}, 100, 10), InvalidArgument);
}

TEST(ChunkedRun, TheToyModelInChunksEqualsItsOneShotRun) {
  const test::ScratchDir scratch;
  test::toy::write_random_folder(scratch.at("toy"), test::toy::Config{}, 41);
  const AudioModel m = AudioModel::load(scratch.at("toy"));
  const int64_t T = 37;
  const Tensor z =
      test::random_normal({2, m.input_spec().shape[1], T}, std::random_device{}(), 0.5f);
  RunOptions one;
  one.mesh = "1x1";
  one.threads = 1;
  const Tensor want = m.run(z, one);
  for (const int64_t chunk : {1, 2, 5, 11, 36, 37, 80}) {
    RunOptions chunked = one;
    chunked.chunk_frames = chunk;
    EXPECT_EQ(m.chunk_frames(T, chunked), chunk);
    const Tensor got = m.run(z, chunked);
    EXPECT_TRUE(test::close_rel_l2(got, want, 1e-6, "chunk " + std::to_string(chunk)));
  }
  RunOptions sharded = one;
  sharded.mesh = "1x2";
  sharded.chunk_frames = 5;
  EXPECT_THROW(m.run(z, sharded), InvalidArgument);
}

// BigVGAN through RunOptions::chunk_frames (a small random BigVGAN v2): chunks equal the one shot
// to f32 rounding, each chunk reported, and chunks run on one device only.
TEST(ChunkedRun, BigVganInChunksEqualsItsOneShotRun) {
  const AudioModel m = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const int64_t T = 45;
  const Tensor mel =
      test::random_uniform({2, m.input_spec().shape[1], T}, std::random_device{}(), -6.f, 1.f);
  RunOptions one;
  one.mesh = "1x1";
  one.threads = 1;
  const Tensor want = m.run(mel, one);
  EXPECT_EQ(m.chunk_frames(T, one), 0);  // the automatic rule: one shot
  for (const int64_t chunk : {1, 4, 9, 44, 100}) {
    RunOptions chunked = one;
    chunked.chunk_frames = chunk;
    int reports = 0;
    chunked.progress = [&](int k, int n, const std::string& what) {
      EXPECT_EQ(k, ++reports);
      EXPECT_EQ(n, (T + chunk - 1) / chunk);
      EXPECT_EQ(what, "chunk");
    };
    EXPECT_EQ(m.chunk_frames(T, chunked), chunk);
    const Tensor got = m.run(mel, chunked);
    EXPECT_EQ(reports, (T + chunk - 1) / chunk);
    EXPECT_TRUE(test::close_rel_l2(got, want, 1e-6, "chunk " + std::to_string(chunk)));
  }
  RunOptions sharded = one;
  sharded.mesh = "1x2";
  sharded.chunk_frames = 5;
  EXPECT_THROW(m.run(mel, sharded), InvalidArgument);
}

}  // namespace
}  // namespace meshnn
