// A request's query string split into its parameters, the one way every reader of a query in
// `meshnn serve` walks it: the stream's and the example route's parsers, the api_key helpers and
// the access log's redaction.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace meshnn::serve {

struct QueryParam {
  std::string_view key;    // before the first '=' (the whole parameter when it has none)
  std::string_view value;  // after it, still %-escaped ("" when there is no '=')
  std::string_view raw;    // the parameter as written (a view into the query)
  bool has_value() const { return raw.size() > key.size(); }
};

// Calls f(QueryParam) for every '&'-separated parameter of `query` (without its '?'), in order;
// an empty parameter ("a&&b") gives an empty key.
template <class F>
void for_each_query_param(std::string_view query, F&& f) {
  for (size_t pos = 0; pos < query.size();) {
    const size_t amp = std::min(query.find('&', pos), query.size());
    const std::string_view raw = query.substr(pos, amp - pos);
    const size_t eq = raw.find('=');
    f(QueryParam{raw.substr(0, eq),
                 eq == std::string_view::npos ? std::string_view() : raw.substr(eq + 1), raw});
    pos = amp + 1;
  }
}

// The query of a request target: what follows its first '?' ("" when there is none).
inline std::string_view query_of(std::string_view target) {
  const size_t q = target.find('?');
  return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

}  // namespace meshnn::serve
