// Private JSON helpers (nlohmann-json stays out of the public headers).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

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

// Typed, strict reading of the fields: io/config_reader.h.

}  // namespace meshnn::io
