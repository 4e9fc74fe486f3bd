// BoundedQueue<T>: the one blocking FIFO of the project, between threads that hand work or data to
// each other (the serve workers' job queue, the stream pipeline's input and output, the MPI
// front's calls onto the MPI thread).
//
// Semantics, all under one mutex:
// - push waits while the queue holds `capacity` items (or up to a given wait); try_push does not
//   wait; push_past_capacity never refuses for room (a caller that already holds a slot).
//   A push that fails leaves its item untouched, so the caller may retry with it.
// - pop takes the oldest item, waiting for one (or up to a given wait).
// - close() refuses every later push and wakes every waiter; the items already queued stay and
//   are still popped, in order; pop reports `closed` only once the queue is closed AND empty.
//   close_and_clear() also drops the queued items (destroyed outside the lock): the consumers see
//   `closed` at once. Closing twice is harmless.
// - An optional observer sees the size after every change, under the lock (a metrics gauge that
//   is never stale).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "meshnn/core/error.h"

namespace meshnn {

template <class T>
class BoundedQueue {
 public:
  using Wait = std::chrono::steady_clock::duration;
  static constexpr Wait kForever = Wait::max();

  enum class Push { ok, full, closed };
  enum class Pop { got, empty, closed };

  // capacity ≥ 1; on_size (may be empty) is called with the new size under the queue's lock.
  explicit BoundedQueue(size_t capacity, std::function<void(size_t)> on_size = {})
      : capacity_(capacity), on_size_(std::move(on_size)) {
    MESHNN_CHECK(capacity >= 1, "BoundedQueue: capacity must be at least 1, got ", capacity);
  }
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Appends item (moved from only on `ok`), waiting up to `wait` for room: `full` when the wait
  // ended without room, `closed` when the queue is closed (also if it closes while waiting).
  Push push(T& item, Wait wait = kForever) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto room = [&] { return closed_ || q_.size() < capacity_; };
    if (wait == kForever)
      cv_.wait(lock, room);
    else if (!cv_.wait_for(lock, wait, room))
      return Push::full;
    if (closed_) return Push::closed;
    append(std::move(item));
    return Push::ok;
  }
  Push push(T&& item, Wait wait = kForever) { return push(item, wait); }
  // push without waiting.
  Push try_push(T& item) { return push(item, Wait::zero()); }
  Push try_push(T&& item) { return push(item, Wait::zero()); }
  // Appends even when full (refused only when closed): for a producer that holds a slot already,
  // e.g. a stream admitted to the server whose later jobs must not be refused for room.
  Push push_past_capacity(T&& item) {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Push::closed;
    append(std::move(item));
    return Push::ok;
  }

  // Takes the oldest item into `out`, waiting up to `wait` (zero: do not wait): `got`; `empty`
  // when none came within the wait; `closed` when the queue is closed and empty.
  Pop pop(T& out, Wait wait = kForever) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto ready = [&] { return closed_ || !q_.empty(); };
    if (wait == kForever)
      cv_.wait(lock, ready);
    else if (wait > Wait::zero())
      cv_.wait_for(lock, wait, ready);
    if (q_.empty()) return closed_ ? Pop::closed : Pop::empty;
    out = std::move(q_.front());
    q_.pop_front();
    changed();
    return Pop::got;
  }
  // Blocking pop: the oldest item, or nullopt once the queue is closed and empty.
  std::optional<T> pop() {
    T out;
    if (pop(out) != Pop::got) return std::nullopt;
    return out;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // close(), and the queued items are dropped; returns how many.
  size_t close_and_clear() {
    std::deque<T> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      dropped.swap(q_);
      changed();
    }
    return dropped.size();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return q_.size();
  }
  size_t capacity() const { return capacity_; }
  bool full() const { return size() >= capacity_; }
  bool closed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closed_;
  }

 private:
  void append(T&& item) {
    q_.push_back(std::move(item));
    changed();
  }
  // Under the lock: every waiter re-checks (pushers wait for room, poppers for items).
  void changed() {
    if (on_size_) on_size_(q_.size());
    cv_.notify_all();
  }

  const size_t capacity_;
  std::function<void(size_t)> on_size_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

}  // namespace meshnn
