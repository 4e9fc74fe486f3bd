// Private JSON helpers (nlohmann-json stays out of the public headers).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace meshnn::io {

// Parses `text`; FormatError "<what>: at line L, column C (byte offset B): <reason>" on bad JSON.
nlohmann::json parse_json(const std::string& text, const std::string& what);
// Reads and parses a JSON file (e.g. a model config); errors name the path.
nlohmann::json read_json_file(const std::string& path);

}  // namespace meshnn::io
