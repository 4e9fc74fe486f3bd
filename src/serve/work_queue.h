// The bounded job queue in front of the `meshnn serve` workers (--workers, --max-queue): a full
// queue refuses at once (503) instead of growing memory. Internal to the serve_* files.
#pragma once

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "meshnn/core/error.h"
#include "serve/metrics.h"

namespace meshnn::serve::internal {

// The bounded queue in front of the workers.
class WorkQueue {
 public:
  // A worker thread that cannot start (a thread or memory limit) is a BackendError, after the
  // ones already started are stopped: a clean exit 1 instead of std::terminate.
  WorkQueue(int workers, int capacity, Metrics& metrics) : capacity_(capacity), metrics_(metrics) {
    try {
      for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(); });
    } catch (const std::system_error& e) {
      const size_t started = threads_.size();
      stop();
      throw BackendError(detail::concat("serve: cannot start worker thread ", started + 1, " of ",
                                        workers, ": ", e.what(),
                                        " (lower --workers, or raise the process's thread or "
                                        "memory limits)"));
    }
  }
  ~WorkQueue() { stop(); }

  // false when full (a stream's later jobs pass `force`: a stream admitted holds one job at most)
  // or stopped.
  bool push(std::function<void()> job, bool force) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || (!force && static_cast<int>(q_.size()) >= capacity_)) return false;
      q_.push_back(std::move(job));
      metrics_.queue_depth = static_cast<int64_t>(q_.size());
    }
    cv_.notify_one();
    return true;
  }
  bool full() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(q_.size()) >= capacity_;
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ && threads_.empty()) return;
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    std::deque<std::function<void()>> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dropped.swap(q_);
    }
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !q_.empty(); });
        if (stop_) return;
        job = std::move(q_.front());
        q_.pop_front();
        metrics_.queue_depth = static_cast<int64_t>(q_.size());
      }
      ++metrics_.busy_workers;
      try {
        job();
      } catch (const std::exception& e) {  // jobs catch their own; this is a last guard
        std::fprintf(stderr, "meshnn serve: internal: job escaped with %s\n", e.what());
      }
      --metrics_.busy_workers;
    }
  }

  int capacity_;
  Metrics& metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace meshnn::serve::internal
