// libFuzzer target: the request-line side of `meshnn serve`'s route table on arbitrary bytes: the
// path matcher (match_route), the query helpers (query_value, query_without: the stream's api_key)
// and the example route's query (parse_example_query) with the input it builds, the WebSocket's
// Origin check (origin_allowed) and the access log's redaction. A meshnn::Error is
// the expected answer to a bad query; a crash, a hang or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "meshnn/core/error.h"
#include "serve/assets.h"
#include "serve/example.h"
#include "serve/routes.h"

// The page's files are generated into meshnn-serve's build; the fuzzer routes without them.
const std::vector<meshnn::serve::WebAsset>& meshnn::serve::web_assets() {
  static const std::vector<WebAsset> none;
  return none;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshnn;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto m = serve::match_route(text)) {
    // A {name} route matched a non-empty segment without '/'; others have no name.
    if (m->route->has_name() == m->name.empty()) std::abort();
    if (m->name.find('/') != std::string::npos) std::abort();
  }
  const std::string key = serve::query_value(text, "api_key");
  const std::string rest = serve::query_without(text, "api_key");
  if (rest.size() > text.size() || key.size() > text.size()) std::abort();
  if (!serve::query_value(rest, "api_key").empty()) std::abort();  // every api_key removed
  // The input split at its first newline into an Origin and a Host: "*" allows all, an origin
  // without a scheme never is the server's own, and a plain host's own http origin always is.
  const size_t nl = text.find('\n');
  const std::string_view origin = text.substr(0, nl);
  const std::string_view host = nl == std::string_view::npos ? "" : text.substr(nl + 1);
  if (!serve::origin_allowed(origin, host, {"*"})) std::abort();
  if (origin.find("://") == std::string_view::npos && serve::origin_allowed(origin, host, {}))
    std::abort();
  if (!host.empty() &&
      host.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") == std::string_view::npos &&
      !serve::origin_allowed("http://" + std::string(host), host, {}))
    std::abort();
  const std::string logged = serve::redacted_target(std::string(text));
  if (text.find('?') == std::string_view::npos && logged != text) std::abort();
  try {
    serve::ExampleQuery q = serve::parse_example_query(text);
    if (!(q.seconds > 0 && q.seconds <= 60) || q.items < 1 || q.items > 64) std::abort();
    q.seconds = std::min(q.seconds, 0.5);  // bounded work per input
    const AudioIoSpec spec{"latent", {-1, 4, -1}, 2, 25, 0};
    if (serve::example_input_npy(spec, q).size() < 128) std::abort();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
