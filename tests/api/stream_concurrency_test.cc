// One stream hammered from several threads (issue 23, item 2): every push / flush / reset either
// runs or throws InUseError ("in use"), never corrupts the stream or deadlocks a pipeline, and the
// calls that ran give exactly the samples of the same calls made serially. This is the claim the
// Python binding relies on (it releases the GIL around each call); `make test-asan` runs it under
// ASan + UBSan, and a -DMESHNN_TSAN=ON build under ThreadSanitizer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "meshnn/audio_model.h"
#include "meshnn/core/exclusive.h"
#include "support/golden.h"
#include "support/stream_test_util.h"

namespace meshnn {
namespace {

using test::max_abs_diff;
using test::push_cut;
using test::random_rows;

constexpr double kTol = 4e-6;  // stream vs one shot (docs/streaming.md)
constexpr int kThreads = 6;

StreamOptions options(const char* mesh) {
  StreamOptions o;
  o.mesh = mesh;
  o.threads = 1;  // per device: the machine is shared, and the test is about the calls
  return o;
}

const AudioModel& vocoder() {
  static const AudioModel v =
      AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  return v;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.data<float>()[i] != b.data<float>()[i]) return false;
  return true;
}

// What one thread saw: the outputs of its pushes that ran, and the calls refused as in use.
struct Seen {
  std::vector<Tensor> pushed;
  int refused = 0;
  std::vector<std::string> other;  // any other error: a failure
};

// Calls fn; a refusal must be InUseError saying "in use", anything else is recorded.
template <class Fn>
bool call(Seen& s, const Fn& fn) {
  try {
    fn();
    return true;
  } catch (const InUseError& e) {
    if (std::string(e.what()).find("in use") == std::string::npos) s.other.push_back(e.what());
    ++s.refused;
  } catch (const std::exception& e) {
    s.other.push_back(e.what());
  }
  return false;
}

TEST(StreamConcurrency, ClaimRefusesASecondHolderAndIsFreedOnReturn) {
  ExclusiveUse use;
  {
    const ExclusiveUse::Claim a(use, "this stream");
    EXPECT_TRUE(use.in_use());
    try {
      const ExclusiveUse::Claim b(use, "this stream");
      ADD_FAILURE() << "second claim held";
    } catch (const InUseError& e) {
      EXPECT_NE(std::string(e.what()).find("this stream is in use by another thread"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(use.in_use());  // the refused claim did not release the first
  }
  EXPECT_FALSE(use.in_use());
  const ExclusiveUse::Claim again(use, "this stream");
  EXPECT_TRUE(use.in_use());
}

// The claim orders its holders: six threads that take turns through it (retrying on InUseError)
// update plain, unsynchronised state inside it, and no update is lost. Under ThreadSanitizer a
// missing happens-before edge between two holders is a reported race.
TEST(StreamConcurrency, ClaimOrdersTheWritesOfSuccessiveHolders) {
  ExclusiveUse use;
  int64_t counter = 0;  // deliberately not atomic: the claim is the only synchronisation
  std::vector<int64_t> log;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int done = 0; done < 2000;) {
        try {
          const ExclusiveUse::Claim c(use, "this stream");
          log.push_back(++counter);
          ++done;
        } catch (const InUseError&) {
          refused.fetch_add(1);
        }
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(counter, kThreads * 2000);
  ASSERT_EQ(log.size(), static_cast<size_t>(kThreads * 2000));
  for (size_t i = 0; i < log.size(); ++i) ASSERT_EQ(log[i], static_cast<int64_t>(i + 1));
  EXPECT_FALSE(use.in_use());
}

// Six threads push the same frames on one stream: each push runs or is refused; the pushes that
// ran return exactly the samples of as many serial pushes (on one device push by push, on a
// pipeline as a multiset of samples), and the flush after them is the end of the serial output
// bit for bit (a push that raced on the history would change both).
TEST(StreamConcurrency, ConcurrentPushesRunOrAreRefusedAndStayExact) {
  const AudioModel& voc = vocoder();
  const Tensor mel = random_rows({1, voc.input_spec().shape[1], 3}, 7, -8.f, 1.f);
  for (const char* mesh : {"1x1", "1x2"}) {
    SCOPED_TRACE(mesh);
    AudioStream s = voc.stream(options(mesh));
    std::vector<Seen> seen(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        for (int i = 0; i < 12; ++i) {
          Tensor y;
          if (call(seen[t], [&] { y = s.push(mel); })) seen[t].pushed.push_back(y);
        }
      });
    for (std::thread& th : threads) th.join();
    std::vector<Tensor> got;
    int refused = 0;
    for (const Seen& v : seen) {
      EXPECT_TRUE(v.other.empty()) << v.other.front();
      got.insert(got.end(), v.pushed.begin(), v.pushed.end());
      refused += v.refused;
    }
    EXPECT_EQ(static_cast<int>(got.size()) + refused, kThreads * 12);
    ASSERT_FALSE(got.empty());
    const Tensor tail = s.flush();

    // The same number of pushes, serially, on the same stream (the flush made it ready for a new
    // input). The same object, because two pipelines may cut the model at different points (the
    // cut follows measured costs), which changes the rounding, not the result.
    std::vector<Tensor> want;
    for (size_t i = 0; i < got.size(); ++i) want.push_back(s.push(mel));
    const Tensor want_tail = s.flush();
    std::vector<Tensor> want_all = want, got_all = got;
    want_all.push_back(want_tail);
    got_all.push_back(tail);
    const Tensor w = concat(want_all, 2), g = concat(got_all, 2);
    ASSERT_EQ(g.shape(), w.shape());
    // The tail is the end of the serial output, bit for bit.
    EXPECT_TRUE(same_bits(tail, w.narrow(2, w.dim(2) - tail.dim(2), tail.dim(2))));
    if (std::string(mesh) == "1x1") {
      // On one device a push returns exactly what the same serial push returns: the concurrent
      // outputs are, as a multiset, the serial pushes' outputs.
      std::vector<bool> used(want.size(), false);
      for (const Tensor& y : got) {
        bool matched = false;
        for (size_t i = 0; i < want.size() && !matched; ++i)
          if (!used[i] && same_bits(y, want[i])) used[i] = matched = true;
        EXPECT_TRUE(matched) << "a concurrent push returned samples no serial push returns";
      }
    } else {
      // A pipeline's push returns what has left the last stage so far (timing decides where one
      // push's samples end), and the threads' order is unknown: the samples, as a multiset.
      std::vector<float> a(g.data<float>(), g.data<float>() + g.numel());
      std::vector<float> b(w.data<float>(), w.data<float>() + w.numel());
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_TRUE(a == b) << "the concurrent pushes' samples are not the serial ones";
    }
    // And the serial stream is the one-shot vocode of the repeated frames.
    std::vector<Tensor> frames(got.size(), mel);
    const Tensor all = concat(frames, 2);
    std::vector<Tensor> out = want;
    out.push_back(want_tail);
    std::vector<Tensor> nonempty;
    for (const Tensor& y : out)
      if (y.dim(2) > 0) nonempty.push_back(y);
    RunOptions one;
    one.mesh = "1x1";
    one.threads = 1;
    EXPECT_LE(max_abs_diff(concat(nonempty, 2), voc.run(all, one)), kTol);
  }
}

// Pushes, flushes and resets from six threads at once, on one device and on a 1x2 pipeline (where
// a push and a flush that waited for each other used to deadlock): every call runs or is refused,
// at least one call is refused while a long push runs, and afterwards the stream decodes a new
// input bit for bit as it does again after a reset, and as the one-shot call to f32 rounding.
TEST(StreamConcurrency, MixedPushFlushResetNeverCorruptOrDeadlock) {
  const AudioModel& voc = vocoder();
  const Tensor small = random_rows({1, voc.input_spec().shape[1], 2}, 11, -8.f, 1.f);
  const Tensor big = random_rows({1, voc.input_spec().shape[1], 64}, 12, -8.f, 1.f);
  for (const char* mesh : {"1x1", "1x2"}) {
    SCOPED_TRACE(mesh);
    AudioStream s = voc.stream(options(mesh));
    std::vector<Seen> seen(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        std::mt19937 rng(100 + t);
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        for (int i = 0; i < 25; ++i) {
          const int what = t == 0 ? 3 : static_cast<int>(rng() % 3);
          call(seen[t], [&] {
            if (what == 0) s.push(small);
            if (what == 1) s.flush();
            if (what == 2) s.reset();
            if (what == 3) s.push(big);  // thread 0: long pushes the others collide with
          });
        }
      });
    for (std::thread& th : threads) th.join();
    int refused = 0;
    for (const Seen& v : seen) {
      EXPECT_TRUE(v.other.empty()) << v.other.front();
      refused += v.refused;
    }
    EXPECT_GT(refused, 0);

    // The stream after the hammer decodes a new input as it does after a clean reset (the same
    // object: another pipeline may cut at other points, see above).
    s.reset();
    const Tensor mel = random_rows({1, voc.input_spec().shape[1], 17}, 13, -8.f, 1.f);
    const Tensor a = push_cut(s, mel, {3, 9}, 2, 2);
    const Tensor b = push_cut(s, mel, {3, 9}, 2, 2);
    EXPECT_TRUE(same_bits(a, b));
    RunOptions one;
    one.mesh = "1x1";
    one.threads = 1;
    EXPECT_LE(max_abs_diff(a, voc.run(mel, one)), kTol);
  }
}

}  // namespace
}  // namespace meshnn
