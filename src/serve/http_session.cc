// An HTTP session's request lifecycle (http_session.h): reading the header and body under
// their deadlines, the per-request accounting, the drain's cut, the disconnect watch while a job
// runs, and answering (errors, HEAD, keep-alive) and closing.
#include "serve/http_session.h"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>

#include "serve/errors.h"

namespace meshnn::serve::internal {

HttpSession::HttpSession(tcp::socket socket, Server& srv) : stream_(std::move(socket)), srv_(srv) {
  ++srv_.metrics.open_connections;
}
HttpSession::~HttpSession() {
  srv_.remove_session(session_);
  end_request(499);  // a request still open when the connection goes (no answer sent)
  --srv_.metrics.open_connections;
}

void HttpSession::start() {
  std::weak_ptr<HttpSession> weak = weak_from_this();
  session_ = srv_.add_session([weak] {
    if (auto self = weak.lock()) net::post(self->stream_.get_executor(), [self] { self->cut(); });
  });
  net::dispatch(stream_.get_executor(),
                beast::bind_front_handler(&HttpSession::read_header, shared_from_this()));
}

void HttpSession::read_header() {
  parser_.emplace();
  parser_->header_limit(16 * 1024);
  parser_->body_limit(static_cast<uint64_t>(srv_.cfg.max_request_bytes));
  stream_.expires_after(ms(first_ ? srv_.cfg.header_timeout : srv_.cfg.idle_timeout));
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&HttpSession::on_header, shared_from_this()));
}

void HttpSession::begin_request() {
  cur_ = Current{};
  cur_.open = true;
  cur_.id = srv_.new_id();
  cur_.t0 = Clock::now();
  ++srv_.in_flight;
  const auto& req = parser_->get();
  cur_.method = std::string(req.method_string());
  cur_.target = redacted_target(std::string(req.target()));
  if (cur_.method.empty()) cur_.method = "-";
  if (cur_.target.empty()) cur_.target = "-";
}

// Access log, metrics, drain accounting: once per request.
void HttpSession::end_request(int status, size_t bytes_out) {
  if (!cur_.open) return;
  cur_.open = false;
  --srv_.in_flight;
  const double t = since(cur_.t0);
  srv_.metrics.request(cur_.endpoint, status, t, cur_.bytes_in, bytes_out);
  srv_.access(cur_.id, cur_.method, cur_.target, cur_.model, status, cur_.bytes_in, bytes_out,
              cur_.audio_s, t);
}

// The drain's end (its deadline or a second signal): an open request is answered 503 (and
// logged) instead of the connection just closing. The reads still pending are cancelled; their
// handlers see cut_ and leave the connection to the answer.
void HttpSession::cut() {
  if (!cur_.open || cur_.answered) return;
  cut_ = true;
  ++srv_.cut_requests;
  if (cur_.token) cur_.token->cancelled = true;  // a running job stops at its next progress
  if (timer_) timer_->cancel();
  beast::error_code ec;
  stream_.socket().cancel(ec);  // a header or body read, or the disconnect watch
  error(503, "draining",
        "the server stopped before this request finished (--drain-timeout or a second signal)",
        true, 5);
}

void HttpSession::on_header(beast::error_code ec, size_t) {
  if (cut_) return;
  if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
      ec == net::error::operation_aborted || ec == net::error::connection_reset ||
      ec == net::error::eof)
    return close_now();  // nothing (complete) was asked
  begin_request();
  if (ec == http::error::body_limit)  // a Content-Length over the limit, seen in the header
    return error(
        413, "payload_too_large",
        "body over --max-request-mb (" + std::to_string(srv_.cfg.max_request_bytes) + " bytes)",
        true);
  if (ec == http::error::header_limit)
    return error(431, "header_too_large", "request header over 16 KiB", true);
  if (ec) return error(400, "bad_request", "malformed HTTP request: " + ec.message(), true);
  const Request& req = parser_->get();
  if (!codings_supported()) return;
  if (websocket::is_upgrade(req)) return upgrade();
  const bool has_body =
      parser_->chunked() || (parser_->content_length() && *parser_->content_length() > 0);
  if (req.method() == http::verb::post && !parser_->chunked() && !parser_->content_length())
    return error(411, "length_required", "POST needs Content-Length (or a chunked body)", true);
  if (parser_->content_length() &&
      *parser_->content_length() > static_cast<uint64_t>(srv_.cfg.max_request_bytes))
    return error(413, "payload_too_large",
                 "body of " + std::to_string(*parser_->content_length()) +
                     " bytes is over --max-request-mb (" +
                     std::to_string(srv_.cfg.max_request_bytes) + " bytes)",
                 true);
  if (has_body && beast::iequals(req[http::field::expect], "100-continue")) {
    auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
    stream_.expires_after(ms(srv_.cfg.write_timeout));
    return http::async_write(stream_, *cont,
                             [self = shared_from_this(), cont](beast::error_code e, size_t) {
                               if (e) return self->close_now();
                               self->read_body();
                             });
  }
  read_body();
}

void HttpSession::read_body() {
  if (cut_) return;
  stream_.expires_after(ms(srv_.cfg.body_timeout));
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&HttpSession::on_body, shared_from_this()));
}

void HttpSession::on_body(beast::error_code ec, size_t) {
  if (cut_) return;
  if (ec == http::error::body_limit)
    return error(
        413, "payload_too_large",
        "body over --max-request-mb (" + std::to_string(srv_.cfg.max_request_bytes) + " bytes)",
        true);
  if (ec == beast::error::timeout) return close_now();  // 408 would need the socket beast closed
  if (ec == http::error::partial_message || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == http::error::end_of_stream)
    return close_now();
  if (ec) return error(400, "bad_request", "malformed HTTP body: " + ec.message(), true);
  cur_.bytes_in = parser_->get().body().size();
  handle();
}

// While a job waits or runs, a readable socket is either the client's close (cancel the job)
// or its next pipelined request (leave it in the kernel buffer).
void HttpSession::watch_disconnect() {
  stream_.socket().async_wait(
      tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
        if (ec || !self->cur_.open || self->cur_.answered) return;
        char c;
        const ssize_t r =
            ::recv(self->stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r > 0) return;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
          return self->watch_disconnect();
        if (self->cur_.token) self->cur_.token->cancelled = true;  // the worker is freed
        if (self->timer_) self->timer_->cancel();
        self->end_request(499);
        self->close_now();
      });
}

void HttpSession::on_job_done(int status, std::string body, const std::string& ctype,
                              double audio) {
  if (!cur_.open || cur_.answered) return;
  if (timer_) timer_->cancel();
  beast::error_code ec;
  stream_.socket().cancel(ec);  // the disconnect watch
  cur_.audio_s = audio;
  reply(status, std::move(body), ctype);
}

void HttpSession::unauthorized() {
  error(401, "unauthorized",
        "missing or wrong API key (Authorization: Bearer KEY or X-API-Key: KEY)");
}
void HttpSession::not_allowed(const char* allow) {
  error(405, "method_not_allowed", std::string("use ") + allow, false, 0, allow);
}

void HttpSession::error(int status, const std::string& code, const std::string& message, bool close,
                        int retry_after, const char* allow) {
  std::vector<std::pair<std::string, std::string>> extra;
  if (retry_after > 0) extra.emplace_back("Retry-After", std::to_string(retry_after));
  if (allow) extra.emplace_back("Allow", allow);
  if (status == 426) extra.emplace_back("Upgrade", "websocket");
  reply(status, error_json(code, message), "application/json", close, extra);
}

void HttpSession::reply(int status, std::string body, const std::string& content_type, bool close,
                        const std::vector<std::pair<std::string, std::string>>& extra) {
  if (!cur_.open || cur_.answered) return;
  cur_.answered = true;
  const Request& req = parser_->get();
  auto res = std::make_shared<Response>(static_cast<http::status>(status),
                                        req.version() ? req.version() : 11);
  res->set(http::field::server, "meshnn");
  res->set(http::field::content_type, content_type);
  res->set("X-Request-Id", cur_.id);
  for (const auto& [k, v] : extra) res->set(k, v);
  cors(req, *res);
  const bool keep = !close && !srv_.draining && req.keep_alive();
  res->keep_alive(keep);
  res->body() = std::move(body);
  res->prepare_payload();
  // HEAD: the header GET would get (its Content-Length too), no body (RFC 9110 9.3.2).
  if (req.method() == http::verb::head) res->body().clear();
  const size_t out = res->body().size();
  stream_.expires_after(ms(srv_.cfg.write_timeout));
  http::async_write(
      stream_, *res,
      [self = shared_from_this(), res, keep, status, out](beast::error_code ec, size_t) {
        self->end_request(ec ? 499 : status, out);
        if (ec) return self->close_now();
        if (!keep) return self->linger_close();
        self->first_ = false;
        self->read_header();
      });
}

// --cors-origin: a request whose Origin is listed (or any, for "*") may read the answer.
void HttpSession::cors(const Request& req, Response& res) const {
  if (srv_.cfg.cors_origins.empty() || !req.count(http::field::origin)) return;
  const std::string origin(req[http::field::origin]);
  for (const std::string& o : srv_.cfg.cors_origins) {
    if (o != "*" && o != origin) continue;
    res.set(http::field::access_control_allow_origin, o == "*" ? "*" : origin);
    res.set(http::field::vary, "Origin");
    res.set(http::field::access_control_expose_headers, "X-Request-Id, Retry-After");
    return;
  }
}

// Closing with unread request bytes would reset the connection and lose the answer at the
// client: send FIN, then read and drop what is still coming for a short while.
void HttpSession::linger_close() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return close_now();
  stream_.expires_after(std::chrono::seconds(2));
  drain_buf_ = std::make_shared<std::array<char, 16384>>();
  drain();
}
void HttpSession::drain() {
  stream_.async_read_some(net::buffer(*drain_buf_),
                          [self = shared_from_this()](beast::error_code ec, size_t) {
                            if (ec) return self->close_now();
                            self->drain();
                          });
}

void HttpSession::close_now() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
}

}  // namespace meshnn::serve::internal
