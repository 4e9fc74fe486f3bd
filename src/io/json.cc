#include "io/json.h"

#include <algorithm>
#include <vector>

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
    throw FormatError(
        detail::concat(what, ": at byte offset 0 (position unknown): invalid JSON: ", e.what()));
  }
}

namespace {

using nlohmann::json;

// A DOM builder on nlohmann's SAX interface: the stock one cannot see duplicate keys, nor the text
// of a number.
class StrictSax {
 public:
  explicit StrictSax(const std::string& what, const std::string& text) : what_(what), text_(text) {}
  json root;

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    if (s.find_first_of(".eE") == std::string::npos)  // an integer beyond 64 bits
      return put(
          json::binary(json::binary_t::container_type(s.begin(), s.end()), kBigIntegerSubtype));
    return put(json(v));
  }
  bool string(json::string_t& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    if (stack_.back()->contains(k))
      throw FormatError(detail::concat(what_, ": duplicate key '", k, "' in ", where(),
                                       " (JSON readers disagree on which value wins)"));
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;  // parse_json reports the position
  }

 private:
  std::string where() const {
    std::string s = "the top-level object";
    if (path_.size() > 1) {
      s = "'";
      for (size_t i = 1; i < path_.size(); ++i) s += (i > 1 ? "." : "") + path_[i];
      s += "'";
    }
    return s;
  }
  json* insert(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& top = *stack_.back();
    if (top.is_object()) {
      json& slot = top[key_];
      slot = std::move(v);
      return &slot;
    }
    top.push_back(std::move(v));
    return &top.back();
  }
  bool put(json v) {
    insert(std::move(v));
    return true;
  }
  bool open(json v) {
    std::string name = stack_.empty()               ? ""
                       : stack_.back()->is_object() ? key_
                                                    : std::to_string(stack_.back()->size());
    stack_.push_back(insert(std::move(v)));
    path_.push_back(std::move(name));
    return true;
  }
  bool close() {
    stack_.pop_back();
    path_.pop_back();
    return true;
  }

  const std::string& what_;
  const std::string& text_;
  std::vector<json*> stack_;  // open containers (object members and array tails are stable)
  std::vector<std::string> path_;
  std::string key_;
};

}  // namespace

nlohmann::json parse_config_json(const std::string& text, const std::string& what) {
  StrictSax sax(what, text);
  bool ok = false;
  try {
    ok = json::sax_parse(text, &sax);
  } catch (const nlohmann::json::exception&) {
    ok = false;
  }
  // On a syntax error the plain parser gives the position and the reason.
  if (!ok) parse_json(text, what);
  if (!ok) throw FormatError(detail::concat(what, ": invalid JSON"));
  return std::move(sax.root);
}

nlohmann::json read_config_json_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_config_json(std::string(bytes.begin(), bytes.end()), path);
}

std::string big_integer_text(const nlohmann::json& v) {
  if (!v.is_binary() || !v.get_binary().has_subtype() ||
      v.get_binary().subtype() != kBigIntegerSubtype)
    return "";
  return std::string(v.get_binary().begin(), v.get_binary().end());
}

nlohmann::json read_json_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_json(std::string(bytes.begin(), bytes.end()), path);
}

}  // namespace meshnn::io
