// Private JSON helpers (nlohmann-json stays out of the public headers).
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "meshnn/core/error.h"

namespace meshnn::io {

// Parses `text`; FormatError "<what>: at line L, column C (byte offset B): <reason>" on bad JSON.
nlohmann::json parse_json(const std::string& text, const std::string& what);
// Reads and parses a JSON file (e.g. a model config); errors name the path.
nlohmann::json read_json_file(const std::string& path);

// For model configs: parse_json plus
//   - a key repeated inside one object is a FormatError naming the key and its object (nlohmann
//     would silently keep the last value);
//   - an integer literal too large for 64 bits (e.g. 2^70) is kept as written, as a binary value
//     tagged kBigIntegerSubtype holding its digits, so that a field reader can report the value
//     as written instead of a rounded double (see big_integer_text).
nlohmann::json parse_config_json(const std::string& text, const std::string& what);
nlohmann::json read_config_json_file(const std::string& path);
constexpr std::uint64_t kBigIntegerSubtype = 0x49;
// The digits of a big-integer marker made by parse_config_json; empty for any other value.
std::string big_integer_text(const nlohmann::json& v);

// Reads config field j[key] into dst when present and not null; InvalidArgument naming
// "<where><key>" otherwise. Integers are strict: only an integer literal that fits T is taken
// (16.7 or 1e30 would otherwise be truncated, or overflow), never a float nor a bool.
template <class T>
void take_config_field(const nlohmann::json& j, const char* key, T& dst, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return;
  const nlohmann::json& v = j[key];
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const std::string big = big_integer_text(v);
    MESHNN_CHECK(big.empty(), "config field ", where, key, " = ", big, " is out of range");
    MESHNN_CHECK(v.is_number_integer(), "config field ", where, key, " must be an integer, got ",
                 v.dump());
    const bool fits =
        v.is_number_unsigned()
            ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                  v.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max());
    MESHNN_CHECK(fits, "config field ", where, key, " = ", v.dump(), " is out of range");
    dst = v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                 : static_cast<T>(v.get<int64_t>());
    return;
  }
  if constexpr (std::is_same_v<T, bool>)
    MESHNN_CHECK(v.is_boolean(), "config field ", where, key, " must be true or false, got ",
                 v.dump());
  try {
    dst = v.get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(detail::concat("config field ", where, key, ": ", e.what()));
  }
}

}  // namespace meshnn::io
