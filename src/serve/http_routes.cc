// An HTTP session's routing (http_session.h): path → handler through the route table
// (the page, health, ready, metrics, OpenAPI, models, examples, CORS preflights), the WebSocket
// upgrade of /v1/models/{name}/stream, and the one-shot jobs (/decode, /vocode, /encode).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "meshnn/core/error.h"
#include "serve/assets.h"
#include "serve/errors.h"
#include "serve/example.h"
#include "serve/http_session.h"
#include "serve/query_params.h"
#include "serve/ws_session.h"

namespace meshnn::serve::internal {

// Path → handler through the route table (routes.h): the key, then the model and what it
// must offer, then the method. A CORS preflight (OPTIONS with Origin) needs no key.
void HttpSession::handle() {
  const Request& req = parser_->get();
  std::string decoded;
  if (!decoded_path(decoded)) return;
  const std::string_view path = decoded;
  const auto match = match_route(path);
  if (!match) return error(404, "not_found", "unknown path " + std::string(path));
  const Route& route = *match->route;
  cur_.endpoint = route.endpoint;
  if (path == "/healthz" || path == "/readyz") cur_.endpoint = path.substr(1);  // as before
  if (req.method() == http::verb::options && !srv_.cfg.cors_origins.empty() &&
      req.count(http::field::origin))
    return preflight(route);
  if (route.auth && !srv_.authorized(req)) return unauthorized();
  std::shared_ptr<const ServedModel> model;
  if (route.has_name()) {
    const auto it = srv_.models.find(match->name);
    if (it == srv_.models.end())
      return error(404, "not_found",
                   "no model named '" + match->name + "' (GET /v1/models lists them)");
    model = it->second;
    cur_.model = match->name;
    if (const std::string why = missing(route.needs, *model); !why.empty())
      return error(404, "not_found", why);
  }
  // HEAD is GET without the body (reply() drops it), wherever GET is allowed.
  const bool get = req.method() == http::verb::get || req.method() == http::verb::head;
  if (route.post ? req.method() != http::verb::post : !get) return not_allowed(route.method());
  switch (route.id) {
    case RouteId::page:
      return page(route);
    case RouteId::health:
      return reply(200, R"({"status":"ok"})", "application/json");
    case RouteId::ready:
      return ready(path == "/readyz");
    case RouteId::metrics:
      return reply(200, srv_.metrics.render(), "text/plain; version=0.0.4");
    case RouteId::openapi:
      return reply(200, openapi_json(!srv_.cfg.api_key.empty()), "application/json");
    case RouteId::models: {
      std::string body = R"({"models":[)";
      bool first = true;
      for (const auto& [name, m] : srv_.models) {
        body += (first ? "" : ",") + m->info_json();
        first = false;
      }
      return reply(200, body + "]}", "application/json");
    }
    case RouteId::model:
      return reply(200, model->info_json(), "application/json");
    case RouteId::decode:
    case RouteId::vocode:
      return one_shot(model, false);
    case RouteId::encode:
      return one_shot(model, true);
    case RouteId::stream:
      return error(426, "upgrade_required",
                   "/stream is a WebSocket: connect with Upgrade: websocket");
    case RouteId::example:
      return example(*model);
  }
}

// Why `m` cannot answer a route that needs `needs` ("" when it can).
std::string HttpSession::missing(Needs needs, const ServedModel& m) {
  const std::string who = "model '" + m.name() + "' (" + m.kind_name() + ")";
  if (needs == Needs::encoder && !m.has_encoder()) return who + " has no encoder";
  if (needs == Needs::stream && !m.has_stream()) return who + " has no stream";
  if (needs == Needs::vocoder && !m.is_vocoder())
    return "/vocode is for vocoders; '" + m.name() + "' is " + m.kind_name() + ": use /decode";
  return "";
}

// A file of the page (web/, built into the binary).
void HttpSession::page(const Route& route) {
  for (const WebAsset& a : web_assets())
    if (a.file == route.asset) return reply(200, std::string(a.body), std::string(a.content_type));
  error(404, "not_found", "unknown path " + route.path);
}

// GET /ready: 200 with the numbers a balancer routes on; 503 (and the error body) while
// draining or while the queue is full. /readyz (`legacy`) answers 200 as it always has.
void HttpSession::ready(bool legacy) {
  nlohmann::json j{{"status", "ready"},
                   {"models", srv_.models.size()},
                   {"queue_depth", srv_.metrics.queue_depth.load()},
                   {"queue_capacity", srv_.cfg.max_queue},
                   {"workers", srv_.cfg.workers},
                   {"busy_workers", srv_.metrics.busy_workers.load()},
                   {"open_streams", srv_.metrics.open_streams.load()}};
  int retry = 0;
  if (srv_.draining) {
    j["status"] = "draining";
    j["error"] = {{"code", "draining"}, {"message", "the server is shutting down"}};
    retry = 5;
  } else if (srv_.queue.full()) {
    j["status"] = "overloaded";
    j["error"] = {{"code", "overloaded"}, {"message", "the job queue is full"}};
    retry = 1;
  }
  if (!retry) return reply(200, legacy ? R"({"status":"ready"})" : j.dump(), "application/json");
  reply(503, j.dump(), "application/json", false, {{"Retry-After", std::to_string(retry)}});
}

// GET /v1/models/{name}/example?seconds=&seed=&items=: a seeded random input (.npy).
void HttpSession::example(const ServedModel& model) {
  try {
    const ExampleQuery eq = parse_example_query(query_of(sv(parser_->get().target())));
    return reply(200, example_input_npy(model.input_spec(), eq), "application/x-npy");
  } catch (const meshnn::Error& e) {
    return error(400, "bad_request", e.what());
  }
}

// A CORS preflight: 204 with what the route allows, when the Origin is one --cors-origin names.
void HttpSession::preflight(const Route& route) {
  const std::string allow = std::string(route.method()) + ", OPTIONS";
  reply(204, "", "text/plain", false,
        {{"Access-Control-Allow-Methods", allow},
         {"Access-Control-Allow-Headers", "Authorization, X-API-Key, Content-Type, Accept"},
         {"Access-Control-Max-Age", "600"}});
}

void HttpSession::upgrade() {
  const Request& req = parser_->get();
  std::string decoded;
  if (!decoded_path(decoded)) return;
  const std::string_view path = decoded;
  const std::string_view query = query_of(sv(req.target()));
  cur_.endpoint = "stream";
  const auto match = match_route(path);
  if (!match || match->route->id != RouteId::stream)
    return error(404, "not_found", "WebSockets are served at /v1/models/{name}/stream", true);
  // Before the key is compared: a foreign page can neither stream (even holding ?api_key=) nor
  // probe keys.
  if (req.count(http::field::origin) &&
      !origin_allowed(sv(req[http::field::origin]), sv(req[http::field::host]),
                      srv_.cfg.cors_origins))
    return error(403, "forbidden",
                 "WebSocket from origin '" + std::string(req[http::field::origin]) +
                     "' refused: it is not this server's own (Host: " +
                     std::string(req[http::field::host]) + ") and not listed by --cors-origin",
                 true);
  if (!srv_.authorized(req, query_value(query, "api_key"))) return unauthorized();
  const std::string& name = match->name;
  const auto it = srv_.models.find(name);
  if (it == srv_.models.end())
    return error(404, "not_found", "no model named '" + name + "'", true);
  cur_.model = name;
  if (!it->second->has_stream())
    return error(404, "not_found",
                 "model '" + name + "' (" + it->second->kind_name() + ") has no stream", true);
  StreamQuery q;
  cli::StreamFrame frame;
  try {
    q = parse_stream_query(query_without(query, "api_key"));
    frame = it->second->stream_frame(q.items);
  } catch (const meshnn::Error& e) {
    return error(400, "bad_request", e.what(), true);
  }
  if (srv_.draining) return error(503, "draining", "the server is shutting down", true, 5);
  if (srv_.cfg.mesh_run)
    return error(501, "not_implemented",
                 "streams are not served under --backend mpi (the mesh runs one-shot requests); "
                 "stream from a server without --backend mpi",
                 true);
  // The stream session takes over the socket and logs itself; this request ends here.
  auto ws = std::make_shared<WsSession>(stream_.release_socket(), srv_, it->second, q.pcm, frame,
                                        cur_.id, cur_.target);
  cur_.open = false;
  --srv_.in_flight;
  ws->start(parser_->release());
}

namespace {

// What a one-shot job hands back to its session.
struct Answer {
  int status = 200;
  std::string body, ctype;
  double audio = 0;  // seconds of audio answered
};

// A one-shot job's model call on a worker, free of the transport: the encoded answer, or the
// error answer of the one error table; nullopt when the session has answered already (504) or
// the client left. A failed MPI mesh stops the server (mesh_failed).
std::optional<Answer> compute_one_shot(Server& srv, const ServedModel& model, const Tensor& input,
                                       OutputFormat fmt, bool encode, const Token& token,
                                       const std::string& id) {
  int status = 200;
  std::string body, ctype = content_type_of(fmt);
  double audio = 0;
  try {
    const auto t = Clock::now();
    if (encode) {
      const Tensor z = model.encode(input, srv.threads());  // (B, C, T)
      audio = static_cast<double>(input.dim(2)) / model.sample_rate();
      srv.metrics.audio(model.name(), audio, since(t));
      body = npy_body(z);  // audio-encode's --out bytes
    } else {
      // Under MPI a started call runs to its end: every rank is in it.
      const Tensor y = srv.cfg.mesh_run ? srv.cfg.mesh_run(model, input)
                                        : model.run(input, srv.threads(),
                                                    [&token](int, int, const std::string&) {
                                                      if (token.expired()) throw Cancelled();
                                                    });
      const double compute = since(t);
      audio = static_cast<double>(y.dim(2)) / model.sample_rate();
      body = encode_output(y, model.sample_rate(), fmt);
      if (fmt == OutputFormat::l16)
        ctype += "; rate=" + std::to_string(model.sample_rate()) +
                 "; channels=" + std::to_string(y.dim(1));
      srv.metrics.audio(model.name(), audio, compute);
    }
  } catch (const CommError& e) {
    // A rank of the mesh died, hung or stopped: this server cannot answer any more.
    std::fprintf(stderr, "meshnn serve: error id=%s: %s\n", id.c_str(), e.what());
    if (!srv.mesh_failed.exchange(true)) srv.stop_after_mesh_fault();
    if (token.expired()) return std::nullopt;
    status = 503;
    body =
        error_json("mesh_failed",
                   "a rank of the MPI mesh failed; the server is stopping (request id " + id + ")");
    ctype = "application/json";
  } catch (const std::exception& e) {
    if (token.expired()) return std::nullopt;  // the session has answered (504) or the client left
    const ErrorStatus st = classify(e);
    status = st.status;
    if (st.ours()) std::fprintf(stderr, "meshnn serve: error id=%s: %s\n", id.c_str(), e.what());
    body = error_json(st.code, shown_message(st, e.what(), id));
    ctype = "application/json";
  }
  return Answer{status, std::move(body), std::move(ctype), audio};
}

}  // namespace

// /decode, /vocode, or /encode (`encode`: a WAV in, .npy latents out).
void HttpSession::one_shot(const std::shared_ptr<const ServedModel>& model, bool encode) {
  const Request& req = parser_->get();
  // The encoder answers latents: .npy only.
  const auto format = encode ? negotiate(sv(req[http::field::accept]), {OutputFormat::npy})
                             : parse_accept(sv(req[http::field::accept]));
  if (encode && !format) {
    return error(406, "not_acceptable", "Accept: /encode answers application/x-npy");
  } else if (!format) {
    return error(406, "not_acceptable", "Accept: none of audio/wav, application/x-npy, audio/L16");
  }
  const BodyType type = parse_content_type(sv(req[http::field::content_type]));
  if (encode && type != BodyType::wav)
    return error(415, "unsupported_media_type",
                 "Content-Type must be audio/wav (the encoder takes a WAV)");
  if (!encode && (type == BodyType::unsupported || (type == BodyType::wav && !model->takes_wave())))
    return error(415, "unsupported_media_type",
                 model->takes_wave() ? "Content-Type must be application/x-npy or audio/wav"
                                     : "Content-Type must be application/x-npy (an .npy input)");
  Tensor input;
  try {
    input = encode ? model->parse_encode_body(req.body()) : model->parse_body(req.body(), type);
  } catch (const meshnn::Error& e) {
    const ErrorStatus st = classify(e);
    return error(st.status, st.code, e.what());
  }
  // Audio seconds summed over the channels: (B, 1, S) of an encode is B · S samples.
  const double seconds =
      encode ? static_cast<double>(input.dim(0)) * input.dim(2) / model->sample_rate()
             : model->output_seconds(input);
  if (seconds > srv_.cfg.max_audio_seconds)
    return error(413, "payload_too_large",
                 std::string(encode ? "the WAV holds " : "the input would give ") +
                     std::to_string(seconds) +
                     " s of audio (summed over its channels), over --max-audio-seconds " +
                     std::to_string(srv_.cfg.max_audio_seconds));
  if (srv_.draining) return error(503, "draining", "the server is shutting down", true, 5);
  auto token = std::make_shared<Token>();
  token->deadline = cur_.t0 + ms(srv_.cfg.request_timeout);
  cur_.token = token;
  auto self = shared_from_this();
  const std::string id = cur_.id;
  const OutputFormat fmt = *format;
  const bool queued = srv_.queue.push(
      [self, model, input, token, fmt, id, encode] {
        if (token->expired()) return;
        std::optional<Answer> a =
            compute_one_shot(self->srv_, *model, input, fmt, encode, *token, id);
        if (!a) return;  // the session has answered (504) or the client left
        net::post(self->stream_.get_executor(), [self, a = std::move(*a)]() mutable {
          self->on_job_done(a.status, std::move(a.body), a.ctype, a.audio);
        });
      },
      false);
  if (!queued) return error(503, "overloaded", "the job queue is full, retry later", false, 1);
  stream_.expires_never();
  timer_.emplace(stream_.get_executor());
  timer_->expires_at(token->deadline);
  timer_->async_wait([self](beast::error_code ec) {
    if (ec || !self->cur_.open || self->cur_.answered || !self->cur_.token) return;
    self->cur_.token->cancelled = true;
    self->error(504, "timeout",
                "no answer within --request-timeout " +
                    std::to_string(self->srv_.cfg.request_timeout) + " s",
                true);
  });
  watch_disconnect();
}

}  // namespace meshnn::serve::internal
