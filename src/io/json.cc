#include "io/json.h"

#include <algorithm>

#include "io/file_util.h"

namespace meshnn::io {

nlohmann::json parse_json(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and may point one past the end on truncated input.
    const size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n'));
    const size_t nl = text.rfind('\n', at == 0 ? 0 : at - 1);
    const size_t col = (nl == std::string::npos || at == 0) ? at + 1 : at - nl;
    throw FormatError(detail::concat(what, ": at line ", line, ", column ", col, " (byte offset ",
                                     at, "): invalid JSON: ", e.what()));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406 (a number beyond double range): nlohmann gives no position.
    throw FormatError(detail::concat(what, ": at byte offset 0 (position unknown): invalid JSON: ", e.what()));
  }
}

nlohmann::json read_json_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_json(std::string(bytes.begin(), bytes.end()), path);
}

}  // namespace meshnn::io
