#include "meshnn/core/profile.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/env.h"

namespace meshnn {
namespace {

struct LayerTotals {
  double seconds = 0, flops = 0;
  long calls = 0;
  long rss = 0;  // bytes, the largest seen after a call
};

struct Profile {
  std::mutex mu;
  std::map<std::string, std::pair<double, long>> totals;
  std::vector<std::pair<std::string, LayerTotals>> layers;  // in order of their first call
  std::map<std::string, size_t> layer_index;
  ~Profile() { print(nullptr); }
  // Prints the totals so far (under `label` when given) to stderr. The caller holds mu or is the
  // destructor.
  void print(const char* label) const {
    if (totals.empty() && layers.empty()) return;
    if (label) std::fprintf(stderr, "meshnn profile of %s:\n", label);
    std::vector<std::pair<std::string, std::pair<double, long>>> v(totals.begin(), totals.end());
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
    std::fprintf(stderr, "meshnn profile (wall seconds summed over device threads):\n");
    for (auto& [name, tc] : v)
      std::fprintf(stderr, "  %-28s %9.3f s  %8ld calls\n", name.c_str(), tc.first, tc.second);
    if (layers.empty()) return;
    std::fprintf(stderr,
                 "meshnn layer profile (first-call order; GFLOP/s in direct FLOPs; resident "
                 "MB after the layer):\n");
    for (auto& [name, t] : layers)
      std::fprintf(stderr, "  %-44s %8.3f s %6ld calls %10.4f GFLOP %7.1f GFLOP/s %7ld MB\n",
                   name.c_str(), t.seconds, t.calls, t.flops * 1e-9,
                   t.seconds > 0 ? t.flops * 1e-9 / t.seconds : 0.0, t.rss >> 20);
  }
  void clear() {
    totals.clear();
    layers.clear();
    layer_index.clear();
  }
};
Profile& profile() {
  static Profile p;
  return p;
}

// Resident bytes now (/proc/self/statm), 0 where unreadable.
long resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * sysconf(_SC_PAGESIZE) : 0;
}

const std::optional<std::string>& profile_value() {
  static const std::optional<std::string> v = env_value(EnvSwitch::profile);
  return v;
}

}  // namespace

bool profiling_enabled() {
  static const bool on = profile_value() && (*profile_value())[0] != '0';
  return on;
}

bool profiling_layers() {
  static const bool on = profile_value() == "layers";
  return on;
}

void profile_add(const char* name, double seconds) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  auto& e = p.totals[name];
  e.first += seconds;
  e.second += 1;
}

void profile_add_layer(const std::string& name, double seconds, double flops) {
  const long rss = resident_bytes();
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  auto [it, fresh] = p.layer_index.emplace(name, p.layers.size());
  if (fresh) p.layers.emplace_back(name, LayerTotals{});
  LayerTotals& t = p.layers[it->second].second;
  t.seconds += seconds;
  t.flops += flops;
  t.calls += 1;
  t.rss = std::max(t.rss, rss);
}

void profile_report(const char* label) {
  if (!profiling_enabled()) return;
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  p.print(label);
  p.clear();
}

}  // namespace meshnn
