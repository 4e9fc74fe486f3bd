// The CLI's one integer option type: every count and size (threads, frames, steps, ids, seeds) is
// registered through add_int_option, which bounds it. CLI11 already parses integers strictly
// ("4.7", "1e9", "true" and values that overflow the type are usage errors); on top of that the
// value must lie in [lo, hi] (so that no later size product can overflow or ask for absurd
// memory: `--push-frames 2^62`), and an unsigned option refuses a minus sign (CLI11 would wrap
// -1 to 2^64 - 1). A bad value is a usage error (exit 2) naming the option and the range.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <type_traits>

namespace meshnn::cli {

template <class T>
CLI::Option* add_int_option(CLI::App* cmd, const std::string& name, T& value, T lo, T hi,
                            const std::string& description) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  CLI::Option* o = cmd->add_option(name, value, description);
  if constexpr (std::is_unsigned_v<T>)
    o->check(CLI::Validator(
        [](std::string& s) {
          return s.find('-') == std::string::npos ? std::string()
                                                  : std::string("must not be negative");
        },
        "", "non-negative"));
  o->check(CLI::Range(lo, hi));
  return o;
}

// Upper bounds shared by the commands (threads: max_threads() of meshnn/core/input_checks.h).
constexpr int64_t kMaxPushFrames = int64_t{1} << 16;  // frames per push of a stream
constexpr int64_t kMaxChunkFrames = int64_t{1} << 24;

}  // namespace meshnn::cli
