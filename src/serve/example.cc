#include "serve/example.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <random>

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
  // spec.shape: −1 on the time axis and on a free batch axis (axis 0).
  Shape shape(spec.shape.begin(), spec.shape.end());
  const int64_t frames =
      std::max<int64_t>(1, std::llround(q.seconds * std::max(spec.frames_per_second, 1e-9)));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int>(i) == spec.time_axis)
      shape[i] = frames;
    else if (shape[i] < 0)
      shape[i] = q.items;
  }
  MESHNN_CHECK_AS(InvalidArgument, q.items == 1 || spec.shape.empty() || spec.shape[0] < 0,
                  "example items ", q.items, ": this model's batch is fixed at 1");
  Tensor t = Tensor::empty(shape);
  std::mt19937_64 gen(q.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = normal(gen);
  return npy_body(t);
}

}  // namespace meshnn::serve
