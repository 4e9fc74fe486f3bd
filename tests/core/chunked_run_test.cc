// runtime::run_chunked: the windows follow from a graph's reach (each chunk's window holds the
// receptive field of every row it keeps, every window the same length, the kept frames partition
// the input), graphs without a finite reach or a whole rate are refused, and a model that chunks
// through it (the toy of tests/support) gives its one-shot output to f32 rounding for any chunk.
#include <gtest/gtest.h>

#include <random>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "runtime/chunked.h"
#include "support/golden.h"
#include "support/scratch_dir.h"
#include "support/toy_model/config.h"
#include "support/toy_model/weights.h"

namespace meshnn {
namespace {

TEST(ChunkedRun, WindowsHoldEveryKeptRowsContextAndPartitionTheInput) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 200; ++trial) {
    graph::Reach r;
    r.left = graph::Rows(static_cast<int64_t>(rng() % 40), 1 + rng() % 3);
    r.right = graph::Rows(static_cast<int64_t>(rng() % 40), 1 + rng() % 3);
    r.rate = graph::Rows(1 + rng() % 8);
    const int64_t frames = 1 + rng() % 300, chunk = 1 + rng() % 60;
    const std::vector<runtime::ChunkWindow> ws = runtime::chunk_windows(r, frames, chunk);
    int64_t next = 0;
    for (const runtime::ChunkWindow& w : ws) {
      EXPECT_EQ(w.keep_begin, next);
      EXPECT_GT(w.keep_end, w.keep_begin);
      EXPECT_LE(w.keep_end - w.keep_begin, chunk);
      EXPECT_EQ(w.length, ws.front().length);
      EXPECT_GE(w.start, 0);
      EXPECT_LE(w.start + w.length, frames);
      // Context: from keep_begin − ⌈left⌉ (or 0) to keep_end + ⌈right⌉ (or the end).
      EXPECT_LE(w.start, std::max<int64_t>(0, w.keep_begin - r.left.ceil()));
      EXPECT_GE(w.start + w.length, std::min(frames, w.keep_end + r.right.ceil()));
      next = w.keep_end;
    }
    EXPECT_EQ(next, frames);
  }
}

TEST(ChunkedRun, ARunWithoutAFiniteReachOrAWholeRateIsRefused) {
  graph::Reach past;
  past.left = graph::Rows(graph::kWholePast);
  EXPECT_THROW(runtime::chunk_windows(past, 100, 10), InvalidArgument);
  graph::Reach strided;
  strided.rate = graph::Rows(1, 4);
  EXPECT_THROW(runtime::chunk_windows(strided, 100, 10), InvalidArgument);
  EXPECT_THROW(runtime::chunk_windows(graph::Reach{}, 100, 0), InvalidArgument);
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

}  // namespace
}  // namespace meshnn
