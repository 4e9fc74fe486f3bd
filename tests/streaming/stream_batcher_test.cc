// Many streams of one model batched (streaming/stream_batcher.h, StreamGroup): each stream's
// output equals the same stream run alone, whatever the push pattern and start time; and the
// stream state a batch stacks is normalised (streams in the same phase save equal counters).
#include "streaming/stream_batcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "api/stream_group.h"
#include "graph/graph.h"
#include "meshnn/audio_model.h"
#include "models/bigvgan/model.h"
#include "support/golden.h"
#include "support/stream_test_util.h"

namespace meshnn {
namespace {

using test::max_abs_diff;
using test::push_cut;
using test::random_rows;

// Batched against alone: the conv kernels' GEMMs block rows differently for a larger batch, so
// rows agree to f32 rounding, not bit for bit (docs/streaming.md gives the measured difference).
constexpr double kBatchTol = 2e-6;

// Stream i's cut points: a first push of 1 + 3i frames (streams start in different phases), then
// pushes of `step` frames, and for odd i one odd-sized push in the middle.
std::vector<int64_t> cuts_of(int i, int64_t frames, int64_t step) {
  std::vector<int64_t> c;
  int64_t at = 1 + 3 * i;
  for (int k = 0; at < frames; ++k) {
    c.push_back(at);
    at += (i % 2 == 1 && k == 2) ? step - 1 : step;
  }
  return c;
}

// Eight streams of one model in a group, each on its own thread starting (i % 4) ms apart, fed
// its own random input of frames + 2i frames (past the look-ahead, so that the streams reach the
// steady phase where they stack) with its own cuts; each must give what the same cuts give alone.
template <class MakeStream>
void eight_streams_equal_solo(MakeStream make, const Shape& frame_shape, int time_dim, float lo,
                              float hi, int64_t step, int64_t frames) {
  constexpr int kStreams = 8;
  auto group = std::make_shared<StreamGroup>(/*window_ms=*/50.0, /*threads=*/1);
  std::vector<Tensor> inputs, batched(kStreams), solo(kStreams);
  for (int i = 0; i < kStreams; ++i) {
    Shape s = frame_shape;
    s[time_dim] = frames + 2 * i;
    inputs.push_back(random_rows(s, 100 + i, lo, hi));
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kStreams; ++i)
    threads.emplace_back([&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(i % 4));
      StreamOptions o;
      o.threads = 1;
      o.group = group;
      auto s = make(o);
      batched[i] = push_cut(s, inputs[i], cuts_of(i, inputs[i].dim(time_dim), step), time_dim, 2);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kStreams; ++i) {
    StreamOptions o;
    o.threads = 1;
    auto s = make(o);
    solo[i] = push_cut(s, inputs[i], cuts_of(i, inputs[i].dim(time_dim), step), time_dim, 2);
    EXPECT_LE(max_abs_diff(batched[i], solo[i]), kBatchTol) << "stream " << i;
  }
  EXPECT_GT(group->batches(), 0);
  EXPECT_GE(group->batched_pushes(), 2 * group->batches());
  // Every push, batched or alone, ran on the group's one runner thread (one OpenMP team).
  EXPECT_EQ(group->impl().batcher.stats().push_threads, 1);
}

TEST(StreamBatcher, EightBigVganStreamsEqualSolo) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  eight_streams_equal_solo([&](const StreamOptions& o) { return voc.stream(o); },
                           {1, voc.input_spec().shape[1], 0}, 2, -8.f, 1.f, 4, 72);
}

TEST(StreamBatcher, EightLtxStreamsEqualSolo) {
  const AudioModel dec = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  eight_streams_equal_solo([&](const StreamOptions& o) { return dec.stream(o); }, {1, 8, 0, 16}, 2,
                           -2.f, 2.f, 3, 30);
}

TEST(StreamBatcher, GroupTakesOneModel) {
  const AudioModel a = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const AudioModel b = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  StreamOptions o;
  o.group = std::make_shared<StreamGroup>();
  AudioStream first = a.stream(o);
  EXPECT_THROW(b.stream(o), InvalidArgument);
  o.mesh = "1x2";
  EXPECT_THROW(a.stream(o), InvalidArgument);
}

// Members may outlive their batcher: its destruction joins the runner thread, and a member's
// later pushes run on the pushing thread, still equal to the stream run alone.
TEST(StreamBatcher, MembersOutliveTheBatcher) {
  auto file = io::SafetensorsFile::open(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  auto model = models::BigVgan::load(file, "", Precision::fp32);
  const Tensor rows =
      models::mel_rows(random_rows({1, model->config().num_mels, 60}, 8, -8.f, 1.f));
  std::unique_ptr<streaming::StreamEngine> member;
  Tensor first;
  {
    streaming::StreamBatcher batcher(streaming::BatcherOptions{1.0, 1});
    member = batcher.join(model->graph(), "bigvgan");
    first = member->push(rows.narrow(1, 0, 40));
    EXPECT_EQ(batcher.stats().solo_pushes, 1);
    EXPECT_EQ(batcher.stats().push_threads, 1);
  }
  const Tensor second = member->push(rows.narrow(1, 40, 20));
  const Tensor last = member->flush();
  auto solo = model->graph();
  EXPECT_LE(max_abs_diff(first, solo->push(rows.narrow(1, 0, 40))), kBatchTol);
  EXPECT_LE(max_abs_diff(second, solo->push(rows.narrow(1, 40, 20))), kBatchTol);
  EXPECT_LE(max_abs_diff(last, solo->flush()), kBatchTol);
}

// Two lanes: six members pushing together (a long window, so each round is one batch) are cut
// into two stacks of three that run side by side on one thread each, and their flushes stack
// too; every member still gets what its stream gives alone.
TEST(StreamBatcher, LanesRunStacksSideBySideAndFlushesStack) {
  auto file = io::SafetensorsFile::open(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  auto model = models::BigVgan::load(file, "", Precision::fp32);
  constexpr int kMembers = 6;
  const int64_t frames = 64, step = 16;  // past the look-ahead: the later rounds stack
  std::vector<Tensor> inputs, batched(kMembers);
  // The rows each push and the flush gave, one after another.
  const auto joined = [](const std::vector<Tensor>& parts) {
    std::vector<Tensor> rows;
    for (const Tensor& p : parts)
      if (p.defined() && p.dim(1) > 0) rows.push_back(p);
    return concat(rows, 1);
  };
  for (int i = 0; i < kMembers; ++i)
    inputs.push_back(
        models::mel_rows(random_rows({1, model->config().num_mels, frames}, 30 + i, -8.f, 1.f)));
  streaming::StreamBatcher batcher(streaming::BatcherOptions{200.0, 2});
  std::vector<std::unique_ptr<streaming::StreamEngine>> members;
  for (int i = 0; i < kMembers; ++i) members.push_back(batcher.join(model->graph(), "bigvgan"));
  std::vector<std::thread> threads;
  for (int i = 0; i < kMembers; ++i)
    threads.emplace_back([&, i] {
      std::vector<Tensor> parts;
      for (int64_t at = 0; at < frames; at += step)
        parts.push_back(members[i]->push(inputs[i].narrow(1, at, step)));
      parts.push_back(members[i]->flush());
      batched[i] = joined(parts);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kMembers; ++i) {
    auto solo = model->graph();
    std::vector<Tensor> parts;
    for (int64_t at = 0; at < frames; at += step)
      parts.push_back(solo->push(inputs[i].narrow(1, at, step)));
    parts.push_back(solo->flush());
    EXPECT_LE(max_abs_diff(batched[i], joined(parts)), kBatchTol) << "member " << i;
  }
  const auto st = batcher.stats();
  EXPECT_GT(st.parallel_batches, 0);
  EXPECT_GT(st.batches, 0);
  EXPECT_LE(st.batched_pushes, 3 * st.batches);  // no stack larger than its lane's share
  EXPECT_GT(st.stacked_flushes, 0);
  EXPECT_EQ(st.push_threads, 1);
}

// The graph level: the state of a stream in its steady phase (past the 38-frame look-ahead) does
// not depend on how far it has run, and a fresh graph loaded with it continues the stream bit for
// bit.
TEST(StreamState, NormalisedAndResumable) {
  auto file = io::SafetensorsFile::open(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  auto model = models::BigVgan::load(file, "", Precision::fp32);
  const int64_t M = model->config().num_mels;
  const Tensor rows = models::mel_rows(random_rows({1, M, 100}, 5, -8.f, 1.f));
  auto short_run = model->graph(), long_run = model->graph();
  short_run->push(rows.narrow(1, 0, 13));
  long_run->push(rows.narrow(1, 0, 13));
  for (int k = 0; k < 10; ++k) short_run->push(rows.narrow(1, 13 + 4 * k, 4));
  for (int k = 0; k < 16; ++k) long_run->push(rows.narrow(1, 13 + 4 * k, 4));
  graph::StreamState a, b;
  short_run->save_state(a);
  long_run->save_state(b);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  EXPECT_EQ(a.counters, b.counters);
  for (size_t t = 0; t < a.tensors.size(); ++t) {
    ASSERT_EQ(a.tensors[t].defined(), b.tensors[t].defined()) << t;
    if (a.tensors[t].defined()) {
      EXPECT_EQ(a.tensors[t].shape(), b.tensors[t].shape()) << t;
    }
  }
  // A fresh graph resumes the long stream: the same next output, and the same state after.
  auto resumed = model->graph();
  graph::StateReader r(b);
  resumed->load_state(r);
  r.finish();
  const Tensor next = rows.narrow(1, 77, 4);
  const Tensor want = long_run->push(next), got = resumed->push(next);
  EXPECT_EQ(max_abs_diff(want, got), 0.0);
  EXPECT_EQ(max_abs_diff(long_run->flush(), resumed->flush()), 0.0);
  // A state from another graph is refused.
  graph::StreamState empty;
  graph::StateReader bad(empty);
  EXPECT_THROW(model->graph()->load_state(bad), Error);
}

}  // namespace
}  // namespace meshnn
