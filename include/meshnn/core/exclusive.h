// One call at a time on an object that is not thread-safe: a second concurrent call is refused
// with InUseError instead of racing on the object's state (or waiting for it).
//
// Refusing rather than waiting is deliberate for streams: a push and a flush of a pipeline from
// two threads would each wait for the other's stage, so a lock that waits can deadlock where a
// refusal cannot. The claim is an atomic flag (acquire on claim, release on return), so the state
// the previous holder wrote is visible to the next one: calls from several threads that take
// turns (with their own synchronisation, or by retrying after InUseError) are safe.
#pragma once

#include <atomic>
#include <string>

#include "meshnn/core/error.h"  // InUseError

namespace meshnn {

class ExclusiveUse {
 public:
  ExclusiveUse() = default;
  ExclusiveUse(const ExclusiveUse&) = delete;
  ExclusiveUse& operator=(const ExclusiveUse&) = delete;

  // Held for the scope of one call. `what` names the object in the message ("this stream").
  class Claim {
   public:
    Claim(ExclusiveUse& use, const char* what) : use_(use) {
      if (use_.busy_.exchange(true, std::memory_order_acquire))
        throw InUseError(std::string(what) +
                         " is in use by another thread: one call at a time per stream (use one "
                         "stream per thread, or a lock)");
    }
    ~Claim() { use_.busy_.store(false, std::memory_order_release); }
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;

   private:
    ExclusiveUse& use_;
  };

  // Whether a call holds it now (a snapshot, for tests and diagnostics).
  bool in_use() const { return busy_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> busy_{false};
};

}  // namespace meshnn
