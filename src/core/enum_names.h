// The one way to spell an enum: a constexpr table of (value, name) pairs with lookups both ways
// and the "a, b or c" list every error message quotes. A table per enum, nothing else: no switch
// returning string literals, no chain of `if (s == "...")` (tests/core/enum_names_test.cc scans
// src/ for both).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshnn/core/error.h"

namespace meshnn {

template <class E>
struct EnumName {
  E value;
  const char* name;
};

// what: the noun the errors use ("precision mode"); entries: every value once, in the order the
// list text shows them.
template <class E, std::size_t N>
struct EnumNames {
  const char* what;
  EnumName<E> entries[N];

  // The name of v, or `fallback` when v is not in the table.
  constexpr const char* name(E v, const char* fallback = "?") const {
    for (const EnumName<E>& e : entries)
      if (e.value == v) return e.name;
    return fallback;
  }
  std::optional<E> find(std::string_view s) const {
    for (const EnumName<E>& e : entries)
      if (s == e.name) return e.value;
    return std::nullopt;
  }
  // s as a value; InvalidArgument "unknown <what> 's' (expected a, b or c)" otherwise.
  E parse(std::string_view s) const {
    if (const auto v = find(s)) return *v;
    throw InvalidArgument(
        detail::concat("unknown ", what, " '", s, "' (expected ", list_text(), ")"));
  }
  // "a, b or c"
  std::string list_text() const {
    std::string out;
    for (std::size_t i = 0; i < N; ++i)
      out += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + entries[i].name;
    return out;
  }
  std::vector<E> values() const {
    std::vector<E> out;
    for (const EnumName<E>& e : entries) out.push_back(e.value);
    return out;
  }
};

}  // namespace meshnn
