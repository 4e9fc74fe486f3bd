// An HTTP/1.1 session of `meshnn serve`: one connection, its requests read under the header / body
// / idle deadlines, routed, and answered in order. Its member functions live by concern:
// http_session.cc (request lifecycle, deadlines, disconnect watch, answering, closing),
// http_routes.cc (path → handler: health, metrics, models, one-shot jobs, the WebSocket
// upgrade), http_semantics.cc (HTTP request semantics: codings refused, path escapes).
// Internal to the serve_* files.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "serve/models.h"
#include "serve/routes.h"
#include "serve/server.h"

namespace meshnn::serve::internal {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, Server& srv);
  ~HttpSession();

  void start();

 private:
  // The request being answered.
  struct Current {
    bool open = false, answered = false;
    std::string id, method, target, model, endpoint = "other";
    Clock::time_point t0;
    size_t bytes_in = 0;
    double audio_s = 0;
    std::shared_ptr<Token> token;
  };

  // http_session.cc
  void read_header();
  void begin_request();
  void end_request(int status, size_t bytes_out = 0);
  void cut();
  void on_header(beast::error_code ec, size_t);
  void read_body();
  void on_body(beast::error_code ec, size_t);
  void watch_disconnect();
  void on_job_done(int status, std::string body, const std::string& ctype, double audio);
  void unauthorized();
  void not_allowed(const char* allow);
  void error(int status, const std::string& code, const std::string& message, bool close = false,
             int retry_after = 0, const char* allow = nullptr);
  void reply(int status, std::string body, const std::string& content_type, bool close = false,
             const std::vector<std::pair<std::string, std::string>>& extra = {});
  void cors(const Request& req, Response& res) const;
  void linger_close();
  void drain();
  void close_now();

  // http_routes.cc
  void handle();
  void upgrade();
  void one_shot(const std::shared_ptr<const ServedModel>& model, bool encode);
  static std::string missing(Needs needs, const ServedModel& m);
  void page(const Route& route);
  void ready(bool legacy);
  void example(const ServedModel& model);
  void preflight(const Route& route);

  // http_semantics.cc
  bool decoded_path(std::string& out);
  bool codings_supported();

  beast::tcp_stream stream_;
  Server& srv_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<net::steady_timer> timer_;
  std::shared_ptr<std::array<char, 16384>> drain_buf_;
  Current cur_;
  bool first_ = true, cut_ = false;
  uint64_t session_ = 0;
};

}  // namespace meshnn::serve::internal
