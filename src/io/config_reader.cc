#include "io/config_reader.h"

#include <algorithm>

#include "io/json.h"
#include "meshnn/core/log.h"
#include "meshnn/io/config_policy.h"

namespace meshnn {

namespace {
thread_local int allow_unknown_depth = 0;  // live AllowUnknownConfig(true) scopes on this thread
}  // namespace

AllowUnknownConfig::AllowUnknownConfig(bool on) : on_(on) {
  if (on_) ++allow_unknown_depth;
}
AllowUnknownConfig::~AllowUnknownConfig() {
  if (on_) --allow_unknown_depth;
}
bool AllowUnknownConfig::active() { return allow_unknown_depth > 0; }

}  // namespace meshnn

namespace meshnn::io {

using nlohmann::json;

ConfigReader::ConfigReader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
  MESHNN_CHECK(j_.is_object(), where_, ": expected a JSON object, got ", j_.type_name());
}

bool ConfigReader::has(const std::string& key) const {
  auto it = j_.find(key);
  return it != j_.end() && !it->is_null();
}

const json& ConfigReader::require(const std::string& key) {
  mark(key);
  MESHNN_CHECK(has(key), where_, ": missing config field '", key, "'");
  return j_.at(key);
}

void ConfigReader::require_if_present(const std::string& key, const json& expected) {
  mark(key);
  if (has(key)) require_eq(key, expected);
}

void ConfigReader::require_eq(const std::string& key, const json& expected) {
  mark(key);
  MESHNN_CHECK(j_.contains(key) && j_.at(key) == expected, where_, ": config field '", key,
               "' must be ", expected.dump(), " (found ",
               j_.contains(key) ? j_.at(key).dump() : "none", ")");
}

ConfigReader& ConfigReader::child(const std::string& key) {
  ConfigReader* c = child_if(key);
  MESHNN_CHECK(c != nullptr, where_, ": missing config section '", key, "'");
  return *c;
}

ConfigReader* ConfigReader::child_if(const std::string& key) {
  mark(key);
  if (!has(key)) return nullptr;
  auto it = children_.find(key);
  if (it == children_.end()) {
    const json& v = j_.at(key);
    MESHNN_CHECK(v.is_object(), where_, ": config field '", key, "' must be a JSON object, got ",
                 v.dump());
    // A section's errors name it: "<file> config" + ".vocoder" / "<file>" + " vocoder".
    const bool dotted = where_.find(' ') != std::string::npos;
    it = children_
             .emplace(key, std::make_unique<ConfigReader>(v, where_ + (dotted ? "." : " ") + key))
             .first;
  }
  return it->second.get();
}

void ConfigReader::allow(std::initializer_list<const char*> keys) {
  for (const char* k : keys) read_.emplace_back(k);
}

void ConfigReader::collect_unknown(const std::string& section,
                                   std::vector<std::string>& out) const {
  // "'key'" at the top, "'key' in 'a.b'" below (as the parser names a duplicate key).
  const std::string in = section.empty() ? "" : " in '" + section + "'";
  if (!open_)
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      const std::string& k = it.key();
      if (std::find(read_.begin(), read_.end(), k) != read_.end()) continue;
      if (std::any_of(prefixes_.begin(), prefixes_.end(),
                      [&](const std::string& p) { return k.rfind(p, 0) == 0; }))
        continue;
      out.push_back("'" + k + "'" + in);
    }
  for (const auto& [k, c] : children_)
    c->collect_unknown(section.empty() ? k : section + "." + k, out);
}

std::vector<std::string> ConfigReader::unknown_keys() const {
  std::vector<std::string> out;
  collect_unknown("", out);
  return out;
}

void ConfigReader::finish() const {
  const std::vector<std::string> unknown = unknown_keys();
  if (unknown.empty()) return;
  std::string list;
  for (const std::string& k : unknown) list += (list.empty() ? "" : ", ") + k;
  const bool one = unknown.size() == 1;
  if (AllowUnknownConfig::active()) {
    log_warn(detail::concat(where_, ": ignoring ", one ? "unknown config field " : "",
                            one ? "" : std::to_string(unknown.size()) + " unknown config fields: ",
                            list, " (allowed by --allow-unknown-config)"));
    return;
  }
  // The way past it, in each of meshnn's front ends.
  const char* how =
      "; to load anyway (the field ignored, logged as a warning) pass --allow-unknown-config on "
      "the command line, allow_unknown_config=True in Python, or set allow_unknown_config in the "
      "C++ load options";
  if (one)
    throw InvalidArgument(detail::concat(where_, ": unknown config field ", unknown[0],
                                         " (it may change the architecture; meshnn does not know "
                                         "it)",
                                         how));
  throw InvalidArgument(detail::concat(where_, ": ", unknown.size(),
                                       " unknown config fields: ", list,
                                       " (they may change the architecture; meshnn does not "
                                       "know them)",
                                       how));
}

void ConfigReader::type_error(const json& v, const std::string& field, const char* expected) const {
  throw InvalidArgument(detail::concat(where_, ": config field '", field, "' must be ", expected,
                                       ", got ", v.dump(), " (", v.type_name(), ")"));
}

std::string ConfigReader::big_integer(const json& v) { return big_integer_text(v); }

void ConfigReader::range_error(const std::string& where, const std::string& field,
                               const std::string& value, long double lo, long double hi) {
  throw InvalidArgument(detail::concat(where, ": config field '", field, "' = ", value,
                                       " is out of range (integers here must be between ",
                                       static_cast<long long>(lo), " and ",
                                       static_cast<unsigned long long>(hi), ")"));
}

}  // namespace meshnn::io
