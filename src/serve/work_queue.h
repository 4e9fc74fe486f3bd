// The bounded job queue in front of the `meshnn serve` workers (--workers, --max-queue): a full
// queue refuses at once (503) instead of growing memory. Internal to the serve_* files.
#pragma once

#include <cstdio>
#include <functional>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "core/bounded_queue.h"
#include "meshnn/core/error.h"
#include "serve/metrics.h"

namespace meshnn::serve::internal {

// The worker threads and the bounded queue (core's BoundedQueue) in front of them.
class WorkQueue {
 public:
  // A worker thread that cannot start (a thread or memory limit) is a BackendError, after the
  // ones already started are stopped: a clean exit 1 instead of std::terminate.
  WorkQueue(int workers, int capacity, Metrics& metrics)
      : metrics_(metrics), q_(static_cast<size_t>(capacity), [&metrics](size_t n) {
          metrics.queue_depth = static_cast<int64_t>(n);
        }) {
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
    using Push = BoundedQueue<std::function<void()>>::Push;
    return (force ? q_.push_past_capacity(std::move(job)) : q_.try_push(job)) == Push::ok;
  }
  bool full() const { return q_.full(); }
  // The jobs still queued are dropped; a job that runs ends first.
  void stop() {
    q_.close_and_clear();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void loop() {
    while (std::optional<std::function<void()>> job = q_.pop()) {
      ++metrics_.busy_workers;
      try {
        (*job)();
      } catch (const std::exception& e) {  // jobs catch their own; this is a last guard
        std::fprintf(stderr, "meshnn serve: internal: job escaped with %s\n", e.what());
      }
      --metrics_.busy_workers;
    }
  }

  Metrics& metrics_;
  BoundedQueue<std::function<void()>> q_;
  std::vector<std::thread> threads_;
};

}  // namespace meshnn::serve::internal
