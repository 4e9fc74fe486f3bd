#include "cli/numeric_option.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace meshnn::cli {

CLI::Validator bounded_int(int64_t lo, int64_t hi, bool binary_suffixes) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, binary_suffixes, range](std::string& s) -> std::string {
        const std::string bad = "'" + s + "': expected an integer in " + range;
        const char* b = s.data();
        const char* e = s.data() + s.size();
        if (b != e && *b == '+') ++b;
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(b, e, v);
        if (ec != std::errc() || p == b) return bad;
        const std::string unit(p, e);
        int shift = 0;
        if (binary_suffixes && (unit == "K" || unit == "KiB")) shift = 10;
        if (binary_suffixes && (unit == "M" || unit == "MiB")) shift = 20;
        if (!unit.empty() && !(binary_suffixes && (unit == "B" || shift > 0)))
          return bad + (binary_suffixes ? " (suffix K or M)" : "");
        // v · 2^shift outside [lo, hi] (checked before shifting, so it cannot overflow).
        if (v < (lo >> shift) || v > (hi >> shift)) return bad;
        v *= int64_t{1} << shift;
        if (v < lo || v > hi) return bad;
        s = std::to_string(v);
        return "";
      },
      "INT in " + range, "bounded_int");
}

CLI::Validator bounded_real(const RealRange& r) {
  char range[96];
  std::snprintf(range, sizeof range, "%s%g, %g]", r.lo_open ? "(" : "[", r.lo, r.hi);
  const std::string text = range;
  return CLI::Validator(
      [r, text](std::string& s) -> std::string {
        // Decimal only: strtod would also take hex floats ("0x1p3") and "nan(…)" spellings.
        if (s.find_first_not_of("0123456789+-.eE") != std::string::npos)
          return "'" + s + "': expected a finite number in " + text;
        char* end = nullptr;
        const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
        const bool above_lo = r.lo_open ? v > r.lo : v >= r.lo;
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || !above_lo || v > r.hi)
          return "'" + s + "': expected a finite number in " + text;
        return "";
      },
      "NUM in " + text, "bounded_real");
}

}  // namespace meshnn::cli
