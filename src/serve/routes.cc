#include "serve/routes.h"

#include <nlohmann/json.hpp>

#include "serve/assets.h"
#include "serve/query_params.h"

namespace meshnn::serve {
namespace {

using json = nlohmann::json;

const std::vector<std::string> kAudioOut{"audio/wav", "application/x-npy", "audio/L16"};
const std::vector<int> kRun{200, 400, 401, 404, 405, 406, 411, 413, 415, 422, 500, 503, 504};

std::vector<Route> build() {
  std::vector<Route> r;
  for (const WebAsset& a : web_assets()) {
    Route p{};
    p.id = RouteId::page;
    p.path = std::string(a.path);
    p.endpoint = "page";
    p.summary = a.path == "/" ? "The page: try, hear, stream and see every served model"
                              : "A file of the page (" + std::string(a.file) + ")";
    p.response_types = {std::string(a.content_type)};
    p.statuses = {200, 405};
    p.asset = std::string(a.file);
    r.push_back(std::move(p));
  }
  auto add = [&](RouteId id, const char* path, bool post, bool auth, Needs needs,
                 const char* endpoint, const char* summary, std::vector<std::string> in,
                 std::vector<std::string> out, std::vector<int> statuses) {
    r.push_back(Route{id, path, post, auth, needs, endpoint, summary, std::move(in), std::move(out),
                      std::move(statuses), ""});
  };
  add(RouteId::health, "/health", false, false, Needs::nothing, "health",
      "Liveness: 200 while the process serves (also at /healthz)", {}, {"application/json"},
      {200, 405});
  add(RouteId::ready, "/ready", false, false, Needs::nothing, "ready",
      "Readiness: models loaded, queue depth, workers; 503 while the queue is full or the server "
      "drains (also at /readyz)",
      {}, {"application/json"}, {200, 405, 503});
  add(RouteId::metrics, "/metrics", false, true, Needs::nothing, "metrics",
      "Prometheus text metrics", {}, {"text/plain"}, {200, 401, 405});
  add(RouteId::openapi, "/openapi.json", false, false, Needs::nothing, "openapi",
      "This document, generated from the server's route table", {}, {"application/json"},
      {200, 405});
  add(RouteId::models, "/v1/models", false, true, Needs::nothing, "models",
      "The served models: what each takes and gives, its endpoints", {}, {"application/json"},
      {200, 401, 405});
  add(RouteId::model, "/v1/models/{name}", false, true, Needs::nothing, "models",
      "One served model", {}, {"application/json"}, {200, 401, 404, 405});
  add(RouteId::decode, "/v1/models/{name}/decode", true, true, Needs::nothing, "decode",
      "Decode an input (.npy in the model's layout, or a mono WAV where the model takes one)",
      {"application/x-npy", "audio/wav"}, kAudioOut, kRun);
  add(RouteId::vocode, "/v1/models/{name}/vocode", true, true, Needs::vocoder, "vocode",
      "A vocoder's /decode (mel .npy or mono WAV in)", {"application/x-npy", "audio/wav"},
      kAudioOut, kRun);
  add(RouteId::encode, "/v1/models/{name}/encode", true, true, Needs::encoder, "encode",
      "Encode a WAV to latents (.npy in the model's /decode layout)", {"audio/wav"},
      {"application/x-npy"}, {200, 400, 401, 404, 405, 406, 411, 413, 415, 500, 503, 504});
  add(RouteId::stream, "/v1/models/{name}/stream", false, true, Needs::stream, "stream",
      "WebSocket stream: float32 input frames in, PCM out as soon as it is final (a plain GET "
      "answers 426)",
      {}, {}, {101, 400, 401, 403, 404, 405, 426, 501, 503});
  add(RouteId::example, "/v1/models/{name}/example", false, true, Needs::nothing, "example",
      "A seeded random input of the model's layout (.npy), to try the model without data", {},
      {"application/x-npy"}, {200, 400, 401, 404, 405});
  return r;
}

// "/v1/models/{name}/x" against "/v1/models/decoder/x": segment by segment, {name} any non-empty
// one.
bool matches(std::string_view tmpl, std::string_view path, std::string& name) {
  while (!tmpl.empty() || !path.empty()) {
    if (tmpl.empty() || path.empty() || tmpl[0] != '/' || path[0] != '/') return false;
    tmpl.remove_prefix(1);
    path.remove_prefix(1);
    const size_t te = std::min(tmpl.find('/'), tmpl.size());
    const size_t pe = std::min(path.find('/'), path.size());
    const std::string_view ts = tmpl.substr(0, te), ps = path.substr(0, pe);
    if (ts == "{name}") {
      if (ps.empty()) return false;
      name = std::string(ps);
    } else if (ts != ps) {
      return false;
    }
    tmpl.remove_prefix(te);
    path.remove_prefix(pe);
  }
  return true;
}

const char* reason(int status) {
  switch (status) {
    case 101:
      return "Switching Protocols: the WebSocket is open";
    case 200:
      return "OK";
    case 400:
      return "Bad request: the message says what is wrong with the input";
    case 401:
      return "Missing or wrong API key";
    case 403:
      return "Forbidden: the upgrade's Origin is neither this server's own nor listed by "
             "--cors-origin";
    case 404:
      return "No such model, or the model does not offer this";
    case 405:
      return "Method not allowed (Allow names the one)";
    case 406:
      return "Not acceptable: Accept allows none of the answer's types";
    case 411:
      return "Length required";
    case 413:
      return "Body or output too large";
    case 415:
      return "Unsupported media type";
    case 422:
      return "Unprocessable: the input overflows float32 inside the model";
    case 426:
      return "Upgrade required: connect as a WebSocket";
    case 500:
      return "Internal error (the message names the request id)";
    case 501:
      return "Not implemented";
    case 503:
      return "Overloaded or draining (Retry-After)";
    case 504:
      return "No answer within --request-timeout";
    default:
      return "";
  }
}

json param(const char* name, const char* in, const char* type, const char* description,
           bool required = false) {
  return {{"name", name},
          {"in", in},
          {"required", required},
          {"description", description},
          {"schema", {{"type", type}}}};
}

json parameters(const Route& r) {
  json p = json::array();
  if (r.has_name()) p.push_back(param("name", "path", "string", "a served model", true));
  if (r.id == RouteId::stream) {
    p.push_back(param("format", "query", "string", "s16le (default) or f32le PCM out"));
    p.push_back(param("items", "query", "integer", "batch items of one frame (default 1)"));
    p.push_back(param("api_key", "query", "string",
                      "the API key, for browsers (which cannot set a WebSocket's headers)"));
  }
  if (r.id == RouteId::example) {
    p.push_back(param("seconds", "query", "number", "audio seconds the input gives (default 1)"));
    p.push_back(param("seed", "query", "integer", "random seed (default 0)"));
    p.push_back(param("items", "query", "integer", "batch items where the model takes a batch"));
  }
  return p;
}

json operation(const Route& r, bool api_key) {
  json op{{"summary", r.summary}, {"operationId", std::string(r.method()) + " " + r.path}};
  op["tags"] = json::array({r.endpoint});
  const json ps = parameters(r);
  if (!ps.empty()) op["parameters"] = ps;
  if (r.post) {
    json content = json::object();
    for (const auto& t : r.request_types)
      content[t] = {{"schema", {{"type", "string"}, {"format", "binary"}}}};
    op["requestBody"] = {{"required", true}, {"content", content}};
  }
  json responses = json::object();
  for (int s : r.statuses) {
    json res{{"description", reason(s)}};
    if (s >= 400 || (s == 503 && r.id == RouteId::ready)) {
      res["content"] = {
          {"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}};
    } else if (s == 200) {
      json content = json::object();
      for (const auto& t : r.response_types)
        content[t] = t == "application/json"
                         ? json{{"schema", {{"type", "object"}}}}
                         : json{{"schema", {{"type", "string"}, {"format", "binary"}}}};
      if (!content.empty()) res["content"] = content;
    }
    responses[std::to_string(s)] = res;
  }
  op["responses"] = responses;
  if (api_key && r.auth) {
    json sec = json::array({{{"bearer", json::array()}}, {{"x_api_key", json::array()}}});
    if (r.id == RouteId::stream) sec.push_back({{"query_key", json::array()}});
    op["security"] = sec;
  }
  return op;
}

}  // namespace

const std::vector<Route>& routes() {
  static const std::vector<Route> table = build();
  return table;
}

std::optional<RouteMatch> match_route(std::string_view path) {
  if (path == "/healthz") path = "/health";
  if (path == "/readyz") path = "/ready";
  for (const Route& r : routes()) {
    RouteMatch m{&r, ""};
    if (matches(r.path, path, m.name)) return m;
  }
  return std::nullopt;
}

std::string query_value(std::string_view query, std::string_view key) {
  const auto hex = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  std::string out;
  bool found = false;
  for_each_query_param(query, [&](const QueryParam& p) {
    if (found || p.key != key || !p.has_value()) return;
    found = true;
    const std::string_view v = p.value;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '%' && i + 2 < v.size() && hex(v[i + 1]) >= 0 && hex(v[i + 2]) >= 0) {
        out += static_cast<char>(hex(v[i + 1]) * 16 + hex(v[i + 2]));
        i += 2;
      } else {
        out += v[i] == '+' ? ' ' : v[i];
      }
    }
  });
  return out;
}

std::string query_without(std::string_view query, std::string_view key) {
  std::string out;
  for_each_query_param(query, [&](const QueryParam& p) {
    if (p.key == key) return;
    if (!out.empty()) out += '&';
    out += p.raw;
  });
  return out;
}

namespace {
std::string lower(std::string_view a) {
  std::string s(a);
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}
// "host[:port]" in lower case, without the scheme's default port (":80" of http).
std::string authority(std::string_view a, std::string_view default_port) {
  std::string s = lower(a);
  const std::string suffix = ":" + std::string(default_port);
  if (s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    s.resize(s.size() - suffix.size());
  return s;
}
}  // namespace

bool origin_allowed(std::string_view origin, std::string_view host,
                    const std::vector<std::string>& listed) {
  for (const std::string& o : listed)
    if (o == "*" || o == origin) return true;
  // An origin is scheme://host[:port], nothing more (RFC 6454); "null" and others are foreign.
  const std::string o = lower(origin);
  std::string_view rest, port;
  if (o.rfind("http://", 0) == 0) {
    rest = std::string_view(o).substr(7);
    port = "80";
  } else if (o.rfind("https://", 0) == 0) {
    rest = std::string_view(o).substr(8);  // a TLS-terminating proxy in front
    port = "443";
  } else {
    return false;
  }
  if (rest.empty() || host.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos)
    return false;
  return authority(rest, port) == authority(host, port);
}

std::string redacted_target(std::string target) {
  const size_t q = target.find('?');
  if (q == std::string::npos) return target;
  const std::string_view query = std::string_view(target).substr(q + 1);
  std::string out = target.substr(0, q + 1);
  for_each_query_param(query, [&](const QueryParam& p) {
    out += p.key == "api_key" ? std::string_view("api_key=***") : p.raw;
    if (p.raw.data() + p.raw.size() < query.data() + query.size()) out += '&';  // as written
  });
  return out;
}

std::string openapi_json(bool api_key) {
  json doc{{"openapi", "3.0.3"},
           {"info",
            {{"title", "meshnn serve"},
             {"version", MESHNN_VERSION},
             {"description",
              "The audio decoders of meshnn over HTTP and WebSocket (docs/serve.md). Every error "
              "is {\"error\": {\"code\", \"message\"}}."}}}};
  json paths = json::object();
  for (const Route& r : routes()) {
    const std::string method = r.post ? "post" : "get";
    paths[r.path][method] = operation(r, api_key);
  }
  doc["paths"] = paths;
  json error{{"type", "object"},
             {"required", json::array({"error"})},
             {"properties",
              {{"error",
                {{"type", "object"},
                 {"required", json::array({"code", "message"})},
                 {"properties",
                  {{"code", {{"type", "string"}, {"example", "bad_request"}}},
                   {"message", {{"type", "string"}}}}}}}}}};
  doc["components"]["schemas"]["Error"] = error;
  if (api_key)
    doc["components"]["securitySchemes"] = {
        {"bearer", {{"type", "http"}, {"scheme", "bearer"}}},
        {"x_api_key", {{"type", "apiKey"}, {"in", "header"}, {"name", "X-API-Key"}}},
        {"query_key", {{"type", "apiKey"}, {"in", "query"}, {"name", "api_key"}}}};
  return doc.dump(1);
}

}  // namespace meshnn::serve
