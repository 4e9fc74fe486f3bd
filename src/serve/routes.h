// The route table of `meshnn serve`: every path the server answers, with its methods, whether it
// needs the API key, what a model must offer for it, its body types and its statuses. The HTTP
// session dispatches through match_route() and GET /openapi.json is generated from the same table
// (openapi_json), so a path is answered exactly when the document lists it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshnn::serve {

enum class RouteId {
  page,     // a file of the web page (web/, built into the binary)
  health,   // GET /health, /healthz
  ready,    // GET /ready, /readyz
  metrics,  // GET /metrics
  openapi,  // GET /openapi.json
  models,   // GET /v1/models
  model,    // GET /v1/models/{name}
  decode,   // POST /v1/models/{name}/decode
  vocode,   // POST /v1/models/{name}/vocode
  encode,   // POST /v1/models/{name}/encode
  stream,   // GET /v1/models/{name}/stream (WebSocket)
  example,  // GET /v1/models/{name}/example
};

// What a model must offer for a {name} route (else 404 naming the model's kind).
enum class Needs { nothing, vocoder, encoder, stream };

struct Route {
  RouteId id;
  std::string path;   // OpenAPI template: "/v1/models/{name}/decode"
  bool post = false;  // POST, else GET (and HEAD)
  bool auth = false;  // asks for the API key when the server has one
  Needs needs = Needs::nothing;
  std::string endpoint;  // the `endpoint` label of the metrics and the access log
  std::string summary;
  std::vector<std::string> request_types;   // POST bodies accepted
  std::vector<std::string> response_types;  // the 2xx answer's types (Accept picks one)
  std::vector<int> statuses;                // every status the route answers
  std::string asset;                        // RouteId::page: the file's path in web/
  bool has_name() const { return path.find("{name}") != std::string::npos; }
  const char* method() const { return post ? "POST" : "GET"; }
};

// Every route, in the order the document lists them (the page's files first).
const std::vector<Route>& routes();

struct RouteMatch {
  const Route* route = nullptr;
  std::string name;  // the {name} segment, "" for routes without one
};
// The route of a decoded request path (no query), or nullopt (404 unknown path). /healthz and
// /readyz, the older spellings, match the health and ready routes.
std::optional<RouteMatch> match_route(std::string_view path);

// A query string's parameter `key`, its %XX escapes and '+' decoded ("" when absent), and the
// query without it (the stream's own parser refuses parameters it does not know).
std::string query_value(std::string_view query, std::string_view key);
std::string query_without(std::string_view query, std::string_view key);

// Whether a WebSocket upgrade carrying `origin` (its Origin header) may open: the origin is the
// server's own (http:// or https:// and an authority equal to the request's `host` header, the
// scheme's default port ignored) or `listed` names it (or holds "*"). Browsers apply no CORS to
// WebSockets, so this is what keeps another site's page from streaming (cross-site hijacking).
bool origin_allowed(std::string_view origin, std::string_view host,
                    const std::vector<std::string>& listed);

// A request target for the access log: the value of an api_key query parameter replaced by ***.
std::string redacted_target(std::string target);

// The OpenAPI 3.0 document of routes(): paths, methods, parameters, body types, statuses and the
// error body's schema. `api_key`: the server asks for a key (the security schemes are listed).
std::string openapi_json(bool api_key);

}  // namespace meshnn::serve
