// The bounded plan cache of a layer's oneDNN convolution primitives: one plan per input shape and
// padding.
//
// Audio lengths vary per call, and a long-running process that decodes many lengths must not grow
// without bound: at most N plans, the oldest dropped first (a plan is cheap to rebuild; the packed
// weights it points to stay in the layer's weight store, conv_weights.h). One cache per
// ConvPrimitives object, one object per thread: no lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <tuple>

namespace meshnn::dnnl_glue {

// A plan's identity: batch, spatial extents, pads per axis, and the OpenMP thread count (a
// primitive is specialised to it).
struct ConvPlanKey {
  int64_t b, s0, s1, l0, r0, l1, r1;
  int nthr;
  auto tie() const { return std::tie(b, s0, s1, l0, r0, l1, r1, nthr); }
  bool operator<(const ConvPlanKey& o) const { return tie() < o.tie(); }
};

template <class Key, class Plan, size_t N>
class BoundedPlanCache {
 public:
  static constexpr size_t kCapacity = N;
  // The plan for `key`, or nullptr.
  Plan* find(const Key& key) {
    auto it = plans_.find(key);
    return it == plans_.end() ? nullptr : &it->second;
  }
  // Stores `plan` under `key` (not present), dropping the oldest plan when full.
  Plan& insert(const Key& key, Plan plan) {
    if (plans_.size() >= N) {
      plans_.erase(order_.front());
      order_.pop_front();
    }
    order_.push_back(key);
    return plans_.emplace(key, std::move(plan)).first->second;
  }
  size_t size() const { return plans_.size(); }

 private:
  std::map<Key, Plan> plans_;
  std::deque<Key> order_;  // insertion order
};

}  // namespace meshnn::dnnl_glue
