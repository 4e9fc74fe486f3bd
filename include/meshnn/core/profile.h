// Opt-in wall-time profile by op kind: set MESHNN_PROFILE=1 and the totals are printed to stderr
// at exit (per process; every device thread adds to the same counters). Costs one relaxed check
// per scope when off. MESHNN_PROFILE=layers adds one line per layer (conv layers by name, with
// their direct-algorithm FLOP rate and the process's resident memory right after the layer; a
// stream's pushes count as calls).
#pragma once

#include <chrono>
#include <string>

namespace meshnn {

bool profiling_enabled();
// MESHNN_PROFILE=layers.
bool profiling_layers();
void profile_add(const char* name, double seconds);
// A layer's call: seconds, FLOPs (0: not counted) and the resident bytes of the process after it
// (the maximum over the layer's calls is reported).
void profile_add_layer(const std::string& name, double seconds, double flops);
// Prints the totals so far under "meshnn profile of <label>:" and starts them again from zero (a
// benchmark's phases, each profiled on its own); nothing when the profile is off.
void profile_report(const char* label);

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

// One layer's call under MESHNN_PROFILE=layers (nothing otherwise); `name` must outlive the scope.
class LayerProfileScope {
 public:
  LayerProfileScope(const std::string& name, double flops)
      : name_(profiling_layers() ? &name : nullptr), flops_(flops) {
    if (name_) t0_ = std::chrono::steady_clock::now();
  }
  ~LayerProfileScope() {
    if (name_)
      profile_add_layer(
          *name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(),
          flops_);
  }
  LayerProfileScope(const LayerProfileScope&) = delete;
  LayerProfileScope& operator=(const LayerProfileScope&) = delete;

 private:
  const std::string* name_;
  double flops_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace meshnn
