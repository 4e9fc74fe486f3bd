// BoundedQueue<T> (src/core/bounded_queue.h), the one queue of the project: order, capacity,
// waits, close (wakes every waiter, keeps or drops what is queued), many producers and consumers.
#include "core/bounded_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace meshnn {
namespace {

using namespace std::chrono_literals;
using Q = BoundedQueue<int>;

TEST(BoundedQueue, FifoWithinCapacityAndTryPushRefusesWhenFull) {
  Q q(3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(q.try_push(i + 10), Q::Push::ok);
  EXPECT_TRUE(q.full());
  int item = 99;
  EXPECT_EQ(q.try_push(item), Q::Push::full);
  EXPECT_EQ(item, 99);  // a refused item is untouched
  EXPECT_EQ(q.push(item, 5ms), Q::Push::full);
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.push_past_capacity(7), Q::Push::ok);  // a holder of a slot is not refused
  EXPECT_EQ(q.size(), 4u);
  std::vector<int> got;
  for (int v; q.pop(v, Q::Wait::zero()) == Q::Pop::got;) got.push_back(v);
  EXPECT_EQ(got, (std::vector<int>{10, 11, 12, 7}));
  int v = 0;
  EXPECT_EQ(q.pop(v, 2ms), Q::Pop::empty);
  EXPECT_THROW(Q(0), InvalidArgument);
}

// A refused push leaves a move-only item with the caller, who can retry with it.
TEST(BoundedQueue, RefusedMoveOnlyItemStaysWithTheCaller) {
  BoundedQueue<std::unique_ptr<int>> q(1);
  EXPECT_EQ(q.try_push(std::make_unique<int>(1)), decltype(q)::Push::ok);
  auto p = std::make_unique<int>(2);
  EXPECT_EQ(q.try_push(p), decltype(q)::Push::full);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*q.pop().value(), 1);
  EXPECT_EQ(q.try_push(p), decltype(q)::Push::ok);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(*q.pop().value(), 2);
}

// A blocking push waits for room and goes on as soon as a pop makes it.
TEST(BoundedQueue, BlockingPushWaitsForRoom) {
  Q q(1);
  ASSERT_EQ(q.try_push(1), Q::Push::ok);
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_EQ(q.push(2), Q::Push::ok);
    pushed = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(pushed.load());  // still full
  EXPECT_EQ(q.pop().value(), 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.pop().value(), 2);
}

// close() wakes a blocked pusher (closed, item untouched) and every blocked popper; what was
// queued before the close is still popped, then pop says closed.
TEST(BoundedQueue, CloseWakesEveryWaiterAndKeepsTheQueuedItems) {
  Q full(1);
  ASSERT_EQ(full.try_push(5), Q::Push::ok);
  std::atomic<int> pusher_result{-1};
  std::thread pusher([&] { pusher_result = static_cast<int>(full.push(6)); });
  Q empty(4);
  std::vector<std::thread> poppers;
  std::atomic<int> woke{0};
  for (int i = 0; i < 3; ++i)
    poppers.emplace_back([&] {
      EXPECT_FALSE(empty.pop().has_value());
      ++woke;
    });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(woke.load(), 0);
  EXPECT_EQ(pusher_result.load(), -1);
  full.close();
  empty.close();
  pusher.join();
  for (auto& t : poppers) t.join();
  EXPECT_EQ(pusher_result.load(), static_cast<int>(Q::Push::closed));
  EXPECT_EQ(woke.load(), 3);
  EXPECT_EQ(full.try_push(7), Q::Push::closed);
  EXPECT_EQ(full.push_past_capacity(7), Q::Push::closed);
  EXPECT_EQ(full.pop().value(), 5);  // queued before the close
  int v = 0;
  EXPECT_EQ(full.pop(v, Q::Wait::zero()), Q::Pop::closed);
  EXPECT_TRUE(full.closed());
}

TEST(BoundedQueue, CloseAndClearDropsTheQueuedItems) {
  auto counter = std::make_shared<int>(0);
  BoundedQueue<std::shared_ptr<int>> q(4);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(q.try_push(std::shared_ptr<int>(counter)), decltype(q)::Push::ok);
  EXPECT_EQ(counter.use_count(), 4);
  EXPECT_EQ(q.close_and_clear(), 3u);
  EXPECT_EQ(counter.use_count(), 1);  // destroyed
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(q.pop().has_value());
  EXPECT_EQ(q.close_and_clear(), 0u);  // twice is harmless
}

// The observer sees every size, in order, under the lock: a gauge that ends at the true size.
TEST(BoundedQueue, ObserverSeesEverySize) {
  std::vector<size_t> sizes;
  Q q(8, [&](size_t n) { sizes.push_back(n); });
  (void)q.try_push(1);
  (void)q.try_push(2);
  (void)q.pop();
  (void)q.close_and_clear();
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 2, 1, 0}));
}

// Four producers push random-length runs of distinct values through a queue of 3 to three
// consumers; every value arrives exactly once, each producer's values in its order, the size
// never exceeds the capacity, and a close after the producers end lets every consumer finish.
TEST(BoundedQueue, ManyProducersAndConsumersLoseNothing) {
  constexpr int kProducers = 4, kConsumers = 3;
  std::atomic<size_t> max_size{0};
  Q q(3, [&](size_t n) {
    size_t m = max_size.load();
    while (n > m && !max_size.compare_exchange_weak(m, n)) {
    }
  });
  std::mt19937 rng(33);
  std::vector<int> counts(kProducers);
  for (int& c : counts) c = 500 + static_cast<int>(rng() % 1000);
  std::vector<std::thread> producers, consumers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < counts[p]; ++i) ASSERT_EQ(q.push(p * 100000 + i), Q::Push::ok);
    });
  std::vector<std::vector<int>> got(kConsumers);
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&, c] {
      while (std::optional<int> v = q.pop()) got[c].push_back(*v);
    });
  for (auto& t : producers) t.join();
  q.close();
  for (auto& t : consumers) t.join();
  EXPECT_LE(max_size.load(), 3u);
  std::vector<int> all;
  for (const auto& g : got) {
    // Within one consumer, each producer's values come in increasing order.
    std::vector<int> last(kProducers, -1);
    for (int v : g) {
      EXPECT_GT(v % 100000, last[v / 100000]);
      last[v / 100000] = v % 100000;
    }
    all.insert(all.end(), g.begin(), g.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int> want;
  for (int p = 0; p < kProducers; ++p)
    for (int i = 0; i < counts[p]; ++i) want.push_back(p * 100000 + i);
  EXPECT_EQ(all, want);
}

}  // namespace
}  // namespace meshnn
