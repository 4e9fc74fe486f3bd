// The one strict reader of model configs (LTX, BigVGAN, MiniMax-H3, GR00T adapter and head).
//
// Over a document parsed by parse_config_json (duplicate keys already refused there):
//   - typed fields: integers only from integer literals that fit (16.7 and 16.0 are refused: a
//     float literal where an integer belongs is a config written wrong, never rounded), doubles
//     from any number, bools only from true / false, strings only from strings, lists of those;
//   - every key of an object must be read or declared (allow / allow_prefix); finish() reports
//     every unknown key of the object and of its sub-objects at once, naming the file.
// Errors are InvalidArgument "<where>: config field '<key>' …", where = file (+ " " + path).
#pragma once

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "meshnn/core/error.h"

namespace meshnn::io {

class ConfigReader {
 public:
  // j: the object to read (InvalidArgument naming `where` when it is not an object). `where`
  // names the file (and the section, e.g. "x.safetensors config"); kept by value.
  ConfigReader(const nlohmann::json& j, std::string where);
  ConfigReader(const ConfigReader&) = delete;
  ConfigReader& operator=(const ConfigReader&) = delete;

  const std::string& where() const { return where_; }
  const nlohmann::json& doc() const { return j_; }
  // Present and not null (null means "absent", as Python's json.dump of None).
  bool has(const std::string& key) const;

  // Required field (InvalidArgument naming the key when absent or null).
  template <class T>
  T get(const std::string& key) {
    return convert<T>(require(key), key);
  }
  // Optional field: absent or null → fallback.
  template <class T>
  T get_or(const std::string& key, T fallback) {
    mark(key);
    return has(key) ? convert<T>(j_.at(key), key) : fallback;
  }
  // Optional field read into dst; returns whether it was present.
  template <class T>
  bool take(const std::string& key, T& dst) {
    mark(key);
    if (!has(key)) return false;
    dst = convert<T>(j_.at(key), key);
    return true;
  }
  // A field meshnn does not use but whose value changes the model: when present it must equal
  // `expected` (InvalidArgument naming both).
  void require_if_present(const std::string& key, const nlohmann::json& expected);
  // Required, equal to `expected`.
  void require_eq(const std::string& key, const nlohmann::json& expected);
  // The raw value of a required field (read: its contents are the caller's to check).
  const nlohmann::json& raw(const std::string& key) { return require(key); }

  // A sub-object, required / when present (nullptr when absent or null). Its unknown keys are
  // reported by this reader's finish() as "<key>.<sub key>".
  ConfigReader& child(const std::string& key);
  ConfigReader* child_if(const std::string& key);

  // Keys accepted without being read (fields meshnn knowingly ignores: training settings, other
  // models' sections), and key families by prefix (e.g. "_" for diffusers' bookkeeping).
  void allow(std::initializer_list<const char*> keys);
  void allow_prefix(std::string prefix) { prefixes_.push_back(std::move(prefix)); }
  // Any key accepted (a section whose contents are not ours, e.g. an LTX file's video model).
  void allow_any() { open_ = true; }

  // The unknown keys of this object and its sub-objects, quoted: "'k'" here, "'k' in 'a.b'" in a
  // sub-object (a.b below this one).
  std::vector<std::string> unknown_keys() const;
  // InvalidArgument "<where>: unknown config field 'k' (…)" (or "N unknown config fields: 'a',
  // 'b' in 'c', …") listing every one at once and naming --allow-unknown-config; no-op when there
  // are none. Under an AllowUnknownConfig scope (meshnn/io/config_policy.h) they are logged (warn)
  // and ignored instead.
  void finish() const;

  // Integers: the value must be an integer literal within [lo, hi] of T's range.
  template <class T>
  static T to_integer(const nlohmann::json& v, const std::string& field, const std::string& where);

 private:
  template <class T>
  T convert(const nlohmann::json& v, const std::string& field);
  const nlohmann::json& require(const std::string& key);
  void collect_unknown(const std::string& section, std::vector<std::string>& out) const;
  void mark(const std::string& key) { read_.insert(read_.end(), key); }
  [[noreturn]] void type_error(const nlohmann::json& v, const std::string& field,
                               const char* expected) const;
  // The digits of an integer literal beyond 64 bits, "" for any other value (json.h).
  static std::string big_integer(const nlohmann::json& v);
  [[noreturn]] static void range_error(const std::string& where, const std::string& field,
                                       const std::string& value, long double lo, long double hi);

  const nlohmann::json& j_;
  std::string where_;
  std::vector<std::string> read_;  // keys read or allowed (small objects: a vector is enough)
  std::vector<std::string> prefixes_;
  bool open_ = false;
  std::map<std::string, std::unique_ptr<ConfigReader>> children_;
};

template <class T>
T ConfigReader::to_integer(const nlohmann::json& v, const std::string& field,
                           const std::string& where) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  constexpr long double lo = static_cast<long double>(std::numeric_limits<T>::min());
  constexpr long double hi = static_cast<long double>(std::numeric_limits<T>::max());
  const std::string big = big_integer(v);
  if (!big.empty()) range_error(where, field, big, lo, hi);
  if (!v.is_number_integer())
    throw InvalidArgument(detail::concat(
        where, ": config field '", field, "' must be an integer, got ", v.dump(), " (",
        v.is_number_float() ? "a float literal: write an integer" : v.type_name(), ")"));
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      range_error(where, field, v.dump(), lo, hi);
    return static_cast<T>(u);
  }
  const int64_t i = v.get<int64_t>();
  if (static_cast<long double>(i) < lo || static_cast<long double>(i) > hi)
    range_error(where, field, v.dump(), lo, hi);
  return static_cast<T>(i);
}

template <class T>
T ConfigReader::convert(const nlohmann::json& v, const std::string& field) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) type_error(v, field, "true or false");
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    return to_integer<T>(v, field, where_);
  } else if constexpr (std::is_floating_point_v<T>) {
    const std::string big = big_integer(v);
    if (!big.empty()) return static_cast<T>(std::stold(big));
    if (!v.is_number()) type_error(v, field, "a number");
    return static_cast<T>(v.get<double>());
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) type_error(v, field, "a string");
    return v.get<std::string>();
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    return v;
  } else {  // std::vector<U>
    if (!v.is_array()) type_error(v, field, "a list");
    T out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(convert<typename T::value_type>(v[i], detail::concat(field, "[", i, "]")));
    return out;
  }
}

}  // namespace meshnn::io
