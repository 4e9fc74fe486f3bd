#include "serve/example.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "cli/batch_limit.h"
#include "meshnn/core/error.h"
#include "serve/body.h"
#include "serve/query_params.h"

namespace meshnn::serve {
namespace {

// The whole of `v` as a number of type T, or nullopt.
template <class T>
std::optional<T> number(std::string_view v) {
  T x{};
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) return std::nullopt;
  return x;
}

}  // namespace

ExampleQuery parse_example_query(std::string_view query) {
  ExampleQuery q;
  for_each_query_param(query, [&q](const QueryParam& p) {
    const std::string_view k = p.key, v = p.value;
    if (k == "seconds") {
      const auto s = number<double>(v);
      MESHNN_CHECK_AS(InvalidArgument, s && std::isfinite(*s) && *s > 0 && *s <= 60,
                      "example seconds '", std::string(v), "': expected a number in (0, 60]");
      q.seconds = *s;
    } else if (k == "seed") {
      const auto s = number<uint64_t>(v);
      MESHNN_CHECK_AS(InvalidArgument, s.has_value(), "example seed '", std::string(v),
                      "': expected a non-negative integer");
      q.seed = *s;
    } else if (k == "items") {
      const auto n = number<int64_t>(v);
      MESHNN_CHECK_AS(InvalidArgument, n && *n >= 1 && *n <= kMaxBatchItems, "example items '",
                      std::string(v), "': expected 1 to ", kMaxBatchItems);
      q.items = *n;
    } else if (!k.empty()) {
      throw InvalidArgument(detail::concat("unknown example parameter '", std::string(k),
                                           "' (known: seconds, seed, items)"));
    }
  });
  return q;
}

std::string example_input_npy(const AudioIoSpec& spec, const ExampleQuery& q) {
  return npy_body(spec.example(q.seconds, q.seed, q.items));
}

}  // namespace meshnn::serve
