#include "meshnn/core/profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/env.h"

namespace meshnn {
namespace {

struct Profile {
  std::mutex mu;
  std::map<std::string, std::pair<double, long>> totals;
  ~Profile() {
    if (totals.empty()) return;
    std::vector<std::pair<std::string, std::pair<double, long>>> v(totals.begin(), totals.end());
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second.first > b.second.first; });
    std::fprintf(stderr, "meshnn profile (wall seconds summed over device threads):\n");
    for (auto& [name, tc] : v)
      std::fprintf(stderr, "  %-28s %9.3f s  %8ld calls\n", name.c_str(), tc.first, tc.second);
  }
};
Profile& profile() {
  static Profile p;
  return p;
}

}  // namespace

bool profiling_enabled() {
  static const bool on = [] {
    const auto v = env_value(EnvSwitch::profile);
    return v && (*v)[0] != '0';
  }();
  return on;
}

void profile_add(const char* name, double seconds) {
  Profile& p = profile();
  std::lock_guard<std::mutex> lock(p.mu);
  auto& e = p.totals[name];
  e.first += seconds;
  e.second += 1;
}

}  // namespace meshnn
