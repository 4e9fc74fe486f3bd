// Opt-in wall-time profile by op kind: set MESHNN_PROFILE=1 and the totals are printed to stderr
// at exit (per process; every device thread adds to the same counters). Costs one relaxed check
// per scope when off.
#pragma once

#include <chrono>

namespace meshnn {

bool profiling_enabled();
void profile_add(const char* name, double seconds);

class ProfileScope {
 public:
  explicit ProfileScope(const char* name) : name_(profiling_enabled() ? name : nullptr) {
    if (name_) t0_ = std::chrono::steady_clock::now();
  }
  ~ProfileScope() {
    if (name_)
      profile_add(name_,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace meshnn
