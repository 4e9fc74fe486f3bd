// The CLI's one real-number option type, beside add_int_option (int_option.h): every bounded
// seconds / size / ratio option is registered through add_real_option, which refuses what CLI11's
// own PositiveNumber lets through: "nan" (every comparison with NaN is false, so `nan > 0` checks
// passed and `--request-timeout nan` timed every request out at once), "inf", and values past a
// sane upper bound (a timeout of 1e300 s overflows the millisecond clock). A bad value is a usage
// error (exit 2) naming the option and the range.
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace meshnn::cli {

// Bounds of a real option: [lo, hi], or (lo, hi] when lo_open.
struct RealRange {
  double lo = 0, hi = 0;
  bool lo_open = false;
  std::string str() const {
    std::ostringstream os;
    os << (lo_open ? "(" : "[") << lo << ", " << hi << "]";
    return os.str();
  }
  bool contains(double v) const {
    return std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  }
};

// "" when `s` is one finite decimal number inside `r`, else why not.
inline std::string check_real(const std::string& s, const RealRange& r) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    return "'" + s + "' is not a finite number";
  if (!r.contains(v)) return "'" + s + "' is outside " + r.str();
  return "";
}

inline CLI::Option* add_real_option(CLI::App* cmd, const std::string& name, double& value,
                                    const RealRange& r, const std::string& description) {
  CLI::Option* o = cmd->add_option(name, value, description);
  o->check(CLI::Validator([r](std::string& s) { return check_real(s, r); }, r.str(), "finite"));
  return o;
}

// Seconds a timeout or age may be: up to 10^6 s (11.6 days), far inside the millisecond clock.
constexpr double kMaxSeconds = 1e6;

}  // namespace meshnn::cli
