// The CLI's numeric option types: every count, size, length and threshold is registered through
// these helpers, which bound it. CLI11 already parses integers strictly ("4.7", "1e9", "true" and
// values that overflow the type are usage errors); on top of that the value must lie in [lo, hi]
// (so that no later size product can overflow or ask for absurd memory: `--push-frames 2^62`, and
// no count is 0 where a loop or a division needs one: `bench ccl --sizes 0`), an unsigned option
// refuses a minus sign (CLI11 would wrap -1 to 2^64 - 1), and a real option refuses NaN and the
// infinities (every comparison with NaN is false, so a NaN bound would switch its check off). A
// bad value is a usage error (exit 2) naming the option and the range.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace meshnn::cli {

// One integer of a list in [lo, hi], strictly parsed (the whole text, optional sign); with
// `binary_suffixes` it may end in K or M (×1024, ×1024²; KiB / MiB / B also), as byte sizes.
// Rewrites the text to the plain number, so CLI11's conversion that follows sees digits only.
CLI::Validator bounded_int(int64_t lo, int64_t hi, bool binary_suffixes = false);
// Bounds of a real option: [lo, hi], or (lo, hi] when lo_open.
struct RealRange {
  double lo = 0, hi = 0;
  bool lo_open = false;
};
// One finite decimal real inside r (NaN, inf, hex floats and trailing garbage refused).
CLI::Validator bounded_real(const RealRange& r);

template <class T>
CLI::Option* add_int_option(CLI::App* cmd, const std::string& name, T& value, T lo, T hi,
                            const std::string& description) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  CLI::Option* o = cmd->add_option(name, value, description);
  if constexpr (std::is_unsigned_v<T>)
    o->check(CLI::Validator(
        [](std::string& s) {
          // CLI11 saturates an unsigned value that overflows (2^64 + 1 → 2^64 − 1): parse here.
          T v{};
          const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
          if (s.find('-') != std::string::npos) return std::string("must not be negative");
          return ec == std::errc() && p == s.data() + s.size()
                     ? std::string()
                     : "'" + s + "': not an integer in [0, " + std::to_string(~T{0}) + "]";
        },
        "", "non-negative"));
  o->check(CLI::Range(lo, hi));
  return o;
}

// A list of integers, comma separated or repeated (`--chunks 8,16` = `--chunks 8 16`), each in
// [lo, hi]; at least one.
template <class T>
CLI::Option* add_int_list_option(CLI::App* cmd, const std::string& name, std::vector<T>& values,
                                 T lo, T hi, const std::string& description,
                                 bool binary_suffixes = false) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>);
  return cmd->add_option(name, values, description)
      ->delimiter(',')
      // a transform, not a check: CLI11 hands a check a copy, and "64K" must reach the
      // conversion (and any check added after this one) as "65536"
      ->transform(bounded_int(static_cast<int64_t>(lo), static_cast<int64_t>(hi), binary_suffixes));
}

// A real option (seconds, milliseconds, dB) inside r, finite.
inline CLI::Option* add_real_option(CLI::App* cmd, const std::string& name, double& value,
                                    const RealRange& r, const std::string& description) {
  return cmd->add_option(name, value, description)->check(bounded_real(r));
}
inline CLI::Option* add_real_list_option(CLI::App* cmd, const std::string& name,
                                         std::vector<double>& values, const RealRange& r,
                                         const std::string& description) {
  return cmd->add_option(name, values, description)->delimiter(',')->check(bounded_real(r));
}

// Upper bounds shared by the commands (threads: max_threads() of meshnn/core/input_checks.h).
constexpr int64_t kMaxPushFrames = int64_t{1} << 16;  // frames per push of a stream
constexpr int64_t kMaxChunkFrames = int64_t{1} << 24;
// Seconds a timeout or age may be: up to 10^6 s (11.6 days), far inside the millisecond clock.
constexpr double kMaxSeconds = 1e6;

}  // namespace meshnn::cli
