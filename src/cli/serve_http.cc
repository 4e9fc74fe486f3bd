// The server's network side: accept loop, HTTP sessions, WebSocket stream sessions, drain. Long
// (~1060 lines): the three share Beast's types and one request lifecycle (limits, deadlines,
// queue hand-off, error replies), which split files would each have to re-state.
#include "cli/serve_http.h"

#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <system_error>
#include <thread>

#include "cli/serve_assets.h"
#include "cli/serve_example.h"
#include "cli/serve_metrics.h"
#include "cli/serve_routes.h"
#include "cli/stream_frame.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/memory.h"

namespace meshnn::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1e3));
}
std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Thrown from a job's progress callback: the client left or the request timed out.
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

// Shared by a request (or stream) and its jobs.
struct Token {
  std::atomic<bool> cancelled{false};
  Clock::time_point deadline = Clock::time_point::max();
  bool expired() const { return cancelled.load() || Clock::now() > deadline; }
};

// A request target for the access log: the value of an api_key query parameter replaced.
std::string redacted(std::string target) {
  const size_t q = target.find('?');
  if (q == std::string::npos) return target;
  for (size_t pos = q + 1; pos < target.size();) {
    const size_t amp = std::min(target.find('&', pos), target.size());
    if (target.compare(pos, 8, "api_key=") == 0) {
      target.replace(pos + 8, amp - pos - 8, "***");
      return target;
    }
    pos = amp + 1;
  }
  return target;
}

std::string error_json(const std::string& code, const std::string& message) {
  return nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

// The one error → status table of the server, for HTTP answers and WebSocket error frames alike.
// A client's input the model or its checks refuse is 4xx with the cause in the body; anything
// else is a fault of ours (500: the body names the request id, the log has the cause).
struct ErrorStatus {
  int status;
  const char* code;
  bool ours() const { return status == 500; }
};
ErrorStatus classify(const std::exception& e) {
  if (dynamic_cast<const InvalidArgument*>(&e) || dynamic_cast<const ShapeError*>(&e) ||
      dynamic_cast<const FormatError*>(&e))
    return {400, "bad_request"};
  // Finite inputs so large that float32 overflows inside the model (a 3e38 mel): the input's
  // fault, and the message says where.
  if (dynamic_cast<const NumericalError*>(&e)) return {422, "unprocessable"};
  if (dynamic_cast<const CommError*>(&e)) return {503, "mesh_failed"};
  return {500, "internal"};
}

// The bounded queue in front of the workers.
class WorkQueue {
 public:
  // A worker thread that cannot start (a thread or memory limit) is a BackendError, after the
  // ones already started are stopped: a clean exit 1 instead of std::terminate.
  WorkQueue(int workers, int capacity, Metrics& metrics) : capacity_(capacity), metrics_(metrics) {
    try {
      for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { loop(); });
    } catch (const std::system_error& e) {
      const size_t started = threads_.size();
      stop();
      throw BackendError(detail::concat("serve: cannot start worker thread ", started + 1, " of ",
                                        workers, ": ", e.what(),
                                        " (lower --workers, or raise the process's thread or "
                                        "memory limits)"));
    }
  }
  ~WorkQueue() { stop(); }

  // false when full (a stream's later jobs pass `force`: a stream admitted holds one job at most)
  // or stopped.
  bool push(std::function<void()> job, bool force) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ || (!force && static_cast<int>(q_.size()) >= capacity_)) return false;
      q_.push_back(std::move(job));
      metrics_.queue_depth = static_cast<int64_t>(q_.size());
    }
    cv_.notify_one();
    return true;
  }
  bool full() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(q_.size()) >= capacity_;
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_ && threads_.empty()) return;
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    std::deque<std::function<void()>> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dropped.swap(q_);
    }
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !q_.empty(); });
        if (stop_) return;
        job = std::move(q_.front());
        q_.pop_front();
        metrics_.queue_depth = static_cast<int64_t>(q_.size());
      }
      ++metrics_.busy_workers;
      try {
        job();
      } catch (const std::exception& e) {  // jobs catch their own; this is a last guard
        std::fprintf(stderr, "meshnn serve: internal: job escaped with %s\n", e.what());
      }
      --metrics_.busy_workers;
    }
  }

  int capacity_;
  Metrics& metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> q_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

struct Server {
  Server(const ServeConfig& c, std::vector<std::shared_ptr<const ServedModel>> ms)
      : cfg(c), acceptor(ioc), queue(c.workers, c.max_queue, metrics) {
    for (auto& m : ms) models[m->name()] = m;
    metrics.workers = c.workers;
    metrics.queue_capacity = c.max_queue;
    std::random_device rd;
    char b[16];
    std::snprintf(b, sizeof b, "%06x", rd() & 0xffffff);
    id_prefix = b;
  }

  std::string new_id() {
    char b[32];
    std::snprintf(b, sizeof b, "%s-%06llu", id_prefix.c_str(),
                  static_cast<unsigned long long>(++next_id));
    return b;
  }

  // Authorization: Bearer KEY, or X-API-Key: KEY, or (WebSocket upgrades only: browsers cannot
  // set their headers) the query's api_key; compared in constant time.
  bool authorized(const Request& req, const std::string& query_key = "") const {
    if (cfg.api_key.empty()) return true;
    std::string given;
    const auto auth = req[http::field::authorization];
    if (auth.size() > 7 && beast::iequals(auth.substr(0, 7), "Bearer "))
      given = std::string(auth.substr(7));
    else if (req.count("X-API-Key"))
      given = std::string(req["X-API-Key"]);
    else
      given = query_key;
    const std::string& key = cfg.api_key;
    unsigned diff = given.size() != key.size();
    for (size_t i = 0; i < key.size(); ++i)
      diff |= static_cast<unsigned>(key[i] ^ (i < given.size() ? given[i] : 0));
    return diff == 0;
  }

  void access(const std::string& id, const std::string& method, const std::string& target,
              const std::string& model, int status, size_t bytes_in, size_t bytes_out,
              double audio_s, double latency_s) {
    if (!cfg.access_log) return;
    std::fprintf(stderr,
                 "meshnn serve: access id=%s %s %s model=%s status=%d in=%zu out=%zu "
                 "audio_s=%.3f latency_ms=%.1f\n",
                 id.c_str(), method.c_str(), target.c_str(), model.empty() ? "-" : model.c_str(),
                 status, bytes_in, bytes_out, audio_s, latency_s * 1e3);
  }

  int threads() const { return cfg.threads_per_worker; }

  ServeConfig cfg;
  std::map<std::string, std::shared_ptr<const ServedModel>> models;
  Metrics metrics;  // before ioc and queue: their handlers and jobs report to it when destroyed
  // The open sessions (add_session): before ioc too, whose destruction ends the sessions left.
  std::mutex sessions_mu;
  std::map<uint64_t, std::function<void()>> sessions;
  uint64_t next_session = 0;
  net::io_context ioc;
  tcp::acceptor acceptor;
  WorkQueue queue;
  std::atomic<bool> draining{false};
  std::atomic<int64_t> in_flight{0};
  std::atomic<uint64_t> next_id{0};
  std::string id_prefix;
  std::atomic<bool> mesh_failed{false};         // --backend mpi: a rank is gone; exit 3
  std::function<void()> stop_after_mesh_fault;  // set by run_server: drain, then stop

  // The open sessions, so that the end of a drain can answer each one's open request (503).
  // Each entry posts the cut to its session's strand; it is removed when the session goes.
  uint64_t add_session(std::function<void()> cut) {
    std::lock_guard<std::mutex> lock(sessions_mu);
    sessions.emplace(++next_session, std::move(cut));
    return next_session;
  }
  void remove_session(uint64_t id) {
    std::lock_guard<std::mutex> lock(sessions_mu);
    sessions.erase(id);
  }
  void cut_all() {
    std::vector<std::function<void()>> cuts;
    {
      std::lock_guard<std::mutex> lock(sessions_mu);
      for (const auto& [id, cut] : sessions) cuts.push_back(cut);
    }
    for (const auto& cut : cuts) cut();
  }
  std::atomic<int64_t> cut_requests{0};  // answered 503 at the drain's end: exit code 4
};

// ---- WebSocket streams -----------------------------------------------------------------------

class WsSession : public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(tcp::socket socket, Server& srv, std::shared_ptr<const ServedModel> model,
            StreamPcm pcm, cli::StreamFrame frame, std::string id, std::string target)
      : ws_(std::move(socket)),
        srv_(srv),
        model_(std::move(model)),
        pcm_(pcm),
        frame_(frame),
        id_(std::move(id)),
        target_(std::move(target)),
        t0_(Clock::now()) {
    ++srv_.metrics.open_connections;
    ++srv_.metrics.open_streams;
    ++srv_.in_flight;
  }
  ~WsSession() {
    token_->cancelled = true;
    srv_.remove_session(session_);
    --srv_.metrics.open_streams;
    --srv_.metrics.open_connections;
    finish();
  }

  void start(Request req) {
    std::weak_ptr<WsSession> weak = weak_from_this();
    session_ = srv_.add_session([weak] {
      if (auto self = weak.lock()) net::post(self->ws_.get_executor(), [self] { self->cut(); });
    });
    beast::get_lowest_layer(ws_).expires_never();  // the websocket's own timeouts from here
    websocket::stream_base::timeout t{};
    t.handshake_timeout = ms(srv_.cfg.header_timeout);
    t.idle_timeout = ms(srv_.cfg.idle_timeout);
    t.keep_alive_pings = true;  // a peer that vanished without a close times out
    ws_.set_option(t);
    ws_.read_message_max(static_cast<size_t>(srv_.cfg.max_request_bytes));
    const std::string id = id_;
    ws_.set_option(websocket::stream_base::decorator([id](websocket::response_type& res) {
      res.set(http::field::server, "meshnn");
      res.set("X-Request-Id", id);
    }));
    ws_.async_accept(req, beast::bind_front_handler(&WsSession::on_accept, shared_from_this()));
  }

 private:
  // Touched by one job at a time, on the workers only.
  struct State {
    std::shared_ptr<AudioStream> stream;
    std::unique_ptr<PcmEncoder> encoder;
  };

  void on_accept(beast::error_code ec) {
    if (ec) {
      status_ = 400;
      return;
    }
    status_ = 101;
    auto self = shared_from_this();
    const bool queued = srv_.queue.push(
        [self] {
          if (self->token_->expired()) return;
          try {
            self->st_->stream = self->model_->open_stream(self->srv_.threads());
            self->st_->encoder = std::make_unique<PcmEncoder>(
                static_cast<int>(self->frame_.items) * self->model_->channels(),
                self->model_->sample_rate(), self->pcm_);
            net::post(self->ws_.get_executor(), [self] { self->do_read(); });
          } catch (const std::exception& e) {
            post_error(self, e);
          }
        },
        false);
    if (!queued) fail(503, "server busy: the job queue is full, retry later");
  }

  void do_read() {
    if (failed_) return;
    ws_.async_read(buf_, beast::bind_front_handler(&WsSession::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, size_t n) {
    if (ec) {  // closed, timed out, protocol violation or a message over the limit
      token_->cancelled = true;
      if (ec != websocket::error::closed)
        status_ = ec == websocket::error::message_too_big ? 413 : 499;
      return;
    }
    bytes_in_ += n;
    std::string data = beast::buffers_to_string(buf_.data());
    buf_.consume(buf_.size());
    auto self = shared_from_this();
    if (ws_.got_text()) {
      try {
        parse_control(data);
      } catch (const meshnn::Error& e) {
        return fail(e);
      }
      srv_.queue.push(
          [self] {
            if (self->token_->expired()) return;
            job(
                [&] {
                  const auto t = Clock::now();
                  const Tensor y = cli::StreamFrame::as_planar(self->st_->stream->flush());
                  const double c = since(t);
                  return std::make_tuple(self->st_->encoder->encode(y), y.dim(2), c);
                },
                self, true);
          },
          true);
      return;
    }
    // A frame is what `--frames-from` reads for this model and item count (cli/stream_frame.h):
    // a message of another size is refused, never decoded as some other layout.
    const size_t frame_bytes = static_cast<size_t>(frame_.size()) * sizeof(float);
    if (data.size() % frame_bytes != 0)
      return fail(400, detail::concat("stream message of ", data.size(),
                                      " bytes: not a whole number of frames (a frame of '",
                                      model_->name(), "' here is ", frame_.describe(),
                                      "; connect with ?items=N for N batch items)"));
    Tensor frames;
    try {
      frames = frames_from_message(data, frame_.size());
    } catch (const meshnn::Error& e) {
      return fail(e);
    }
    if (!have_frame_) {
      have_frame_ = true;
      first_frame_ = Clock::now();
    }
    frames_ += frames.dim(0);
    if (model_->stream_seconds(frames_, frame_.items) > srv_.cfg.max_audio_seconds)
      return fail(413, "stream longer than --max-audio-seconds " +
                           std::to_string(srv_.cfg.max_audio_seconds) +
                           " s (audio seconds summed over the output channels)");
    srv_.queue.push(
        [self, frames] {
          if (self->token_->expired()) return;
          job(
              [&] {
                // Pushed in groups (the stream's output does not depend on the cut), so a client
                // that leaves mid-message frees the worker after one group.
                const int64_t group = self->model_->push_group();
                std::string bytes;
                int64_t samples = 0;
                const auto t = Clock::now();
                for (int64_t f0 = 0; f0 < frames.dim(0); f0 += group) {
                  if (self->token_->expired()) throw Cancelled();
                  const int64_t n = std::min(group, frames.dim(0) - f0);
                  Tensor part = Tensor::empty({n, frames.dim(1)});
                  std::memcpy(part.data<float>(), frames.data<float>() + f0 * frames.dim(1),
                              part.nbytes());
                  const Tensor y = cli::StreamFrame::as_planar(
                      self->st_->stream->push(self->frame_.to_input(part)));
                  samples += y.dim(2);
                  bytes += self->st_->encoder->encode(y);
                }
                return std::make_tuple(std::move(bytes), samples, since(t));
              },
              self, false);
        },
        true);
  }

  // Runs `work` on the worker; its (bytes, samples, compute seconds) or its error go back to the
  // session's strand.
  template <class Work>
  static void job(Work&& work, const std::shared_ptr<WsSession>& self, bool flush) {
    try {
      auto [bytes, samples, compute] = work();
      net::post(self->ws_.get_executor(),
                [self, b = std::move(bytes), samples = samples, compute = compute,
                 flush]() mutable { self->on_output(std::move(b), samples, compute, flush); });
    } catch (const Cancelled&) {
    } catch (const std::exception& e) {
      post_error(self, e);
    }
  }

  // An error of a worker's job, answered on the session's strand by the server's one table.
  static void post_error(const std::shared_ptr<WsSession>& self, const std::exception& e) {
    const int status = classify(e).status;
    std::string m = e.what();
    net::post(self->ws_.get_executor(), [self, status, m] { self->fail(status, m); });
  }

  void on_output(std::string bytes, int64_t samples, double compute, bool flush) {
    if (failed_) return;
    samples_ += samples;
    compute_s_ += compute;
    auto then = [self = shared_from_this(), flush] {
      if (flush) return self->send_done();
      self->do_read();
    };
    if (bytes.empty()) return then();
    if (!have_audio_) {
      have_audio_ = true;
      first_audio_ms_ = have_frame_ ? 1e3 * since(first_frame_) : 0;
      srv_.metrics.first_audio(model_->name(), first_audio_ms_ / 1e3);
    }
    auto buf = std::make_shared<std::string>(std::move(bytes));
    bytes_out_ += buf->size();
    ws_.binary(true);
    ws_.async_write(net::buffer(*buf),
                    [self = shared_from_this(), buf, then](beast::error_code ec, size_t) {
                      if (ec) {
                        self->token_->cancelled = true;
                        self->status_ = 499;
                        return;
                      }
                      then();
                    });
  }

  void send_done() {
    const double audio = static_cast<double>(samples_) / model_->sample_rate();
    srv_.metrics.audio(model_->name(), audio, compute_s_);
    audio_s_ += audio;
    nlohmann::json j{{"type", "done"},
                     {"samples", samples_},
                     {"first_audio_ms", have_audio_ ? first_audio_ms_ : 0.0},
                     {"rtf", audio > 0 ? compute_s_ / audio : 0.0},
                     {"items", frame_.items},
                     {"request_id", id_}};
    frames_ = samples_ = 0;
    compute_s_ = 0;
    have_frame_ = have_audio_ = false;
    auto buf = std::make_shared<std::string>(j.dump());
    ws_.text(true);
    ws_.async_write(net::buffer(*buf),
                    [self = shared_from_this(), buf](beast::error_code ec, size_t) {
                      if (ec) {
                        self->status_ = 499;
                        return;
                      }
                      self->do_read();
                    });
  }

  void fail(const std::exception& e) { fail(classify(e).status, e.what()); }

  // Access log, metrics, drain accounting: once, when the session goes or when a drain cut it
  // (a worker may still hold the session then, and the process exits without waiting for it).
  void finish() {
    if (finished_) return;
    finished_ = true;
    --srv_.in_flight;
    srv_.metrics.request("stream", status_, since(t0_), bytes_in_, bytes_out_);
    srv_.access(id_, "GET", target_, model_->name(), status_, bytes_in_, bytes_out_, audio_s_,
                since(t0_));
  }

  // The drain's end (its deadline or a second signal): an error frame (503) and a close.
  void cut() {
    if (finished_ || failed_) return;
    ++srv_.cut_requests;
    fail(503, "the server stopped before this stream ended (--drain-timeout or a second signal)");
  }

  // {"type": "error"} then a close; the session ends with the close. A 500 shows only the request
  // id (the cause goes to the log), as over HTTP.
  void fail(int status, const std::string& message) {
    if (failed_) return;
    failed_ = true;
    token_->cancelled = true;
    status_ = status;
    if (status >= 500 && status != 503)
      std::fprintf(stderr, "meshnn serve: error id=%s: %s\n", id_.c_str(), message.c_str());
    const std::string shown =
        status >= 500 && status != 503 ? "internal error (request id " + id_ + ")" : message;
    auto buf = std::make_shared<std::string>(
        nlohmann::json{{"type", "error"}, {"message", shown}, {"request_id", id_}}.dump());
    ws_.text(true);
    const websocket::close_code code = status == 503   ? websocket::close_code::try_again_later
                                       : status >= 500 ? websocket::close_code::internal_error
                                       : status == 413 ? websocket::close_code::too_big
                                                       : websocket::close_code::bad_payload;
    const bool draining = srv_.draining;
    ws_.async_write(net::buffer(*buf),
                    [self = shared_from_this(), buf, code, draining](beast::error_code ec, size_t) {
                      if (ec) {
                        if (draining) self->finish();
                        return;
                      }
                      self->ws_.async_close(code, [self, draining](beast::error_code) {
                        if (draining) self->finish();
                      });
                    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buf_;
  Server& srv_;
  std::shared_ptr<const ServedModel> model_;
  StreamPcm pcm_;
  cli::StreamFrame frame_;
  std::string id_, target_;
  Clock::time_point t0_, first_frame_;
  std::shared_ptr<Token> token_ = std::make_shared<Token>();
  std::shared_ptr<State> st_ = std::make_shared<State>();
  int64_t frames_ = 0, samples_ = 0;
  double compute_s_ = 0, first_audio_ms_ = 0, audio_s_ = 0;
  bool have_frame_ = false, have_audio_ = false, failed_ = false;
  int status_ = 101;
  uint64_t session_ = 0;
  bool finished_ = false;
  size_t bytes_in_ = 0, bytes_out_ = 0;
};

// ---- HTTP ------------------------------------------------------------------------------------

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, Server& srv) : stream_(std::move(socket)), srv_(srv) {
    ++srv_.metrics.open_connections;
  }
  ~HttpSession() {
    srv_.remove_session(session_);
    end_request(499);  // a request still open when the connection goes (no answer sent)
    --srv_.metrics.open_connections;
  }

  void start() {
    std::weak_ptr<HttpSession> weak = weak_from_this();
    session_ = srv_.add_session([weak] {
      if (auto self = weak.lock()) net::post(self->stream_.get_executor(), [self] { self->cut(); });
    });
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&HttpSession::read_header, shared_from_this()));
  }

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

  void read_header() {
    parser_.emplace();
    parser_->header_limit(16 * 1024);
    parser_->body_limit(static_cast<uint64_t>(srv_.cfg.max_request_bytes));
    stream_.expires_after(ms(first_ ? srv_.cfg.header_timeout : srv_.cfg.idle_timeout));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&HttpSession::on_header, shared_from_this()));
  }

  void begin_request() {
    cur_ = Current{};
    cur_.open = true;
    cur_.id = srv_.new_id();
    cur_.t0 = Clock::now();
    ++srv_.in_flight;
    const auto& req = parser_->get();
    cur_.method = std::string(req.method_string());
    cur_.target = redacted(std::string(req.target()));
    if (cur_.method.empty()) cur_.method = "-";
    if (cur_.target.empty()) cur_.target = "-";
  }

  // Access log, metrics, drain accounting: once per request.
  void end_request(int status, size_t bytes_out = 0) {
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
  void cut() {
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

  void on_header(beast::error_code ec, size_t) {
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

  void read_body() {
    if (cut_) return;
    stream_.expires_after(ms(srv_.cfg.body_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&HttpSession::on_body, shared_from_this()));
  }

  void on_body(beast::error_code ec, size_t) {
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

  // Path → handler through the route table (serve_routes.h): the key, then the model and what it
  // must offer, then the method. A CORS preflight (OPTIONS with Origin) needs no key.
  void handle() {
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

  // Why `model` cannot answer a route that needs `needs` ("" when it can).
  static std::string missing(Needs needs, const ServedModel& m) {
    const std::string who = "model '" + m.name() + "' (" + m.kind_name() + ")";
    if (needs == Needs::encoder && !m.has_encoder()) return who + " has no encoder";
    if (needs == Needs::stream && !m.has_stream()) return who + " has no stream";
    if (needs == Needs::vocoder && !m.is_vocoder())
      return "/vocode is for vocoders; '" + m.name() + "' is " + m.kind_name() + ": use /decode";
    return "";
  }

  void page(const Route& route) {
    for (const WebAsset& a : web_assets())
      if (a.file == route.asset)
        return reply(200, std::string(a.body), std::string(a.content_type));
    error(404, "not_found", "unknown path " + route.path);
  }

  // GET /ready: 200 with the numbers a balancer routes on; 503 (and the error body) while
  // draining or while the queue is full. /readyz (`legacy`) answers 200 as it always has.
  void ready(bool legacy) {
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
  void example(const ServedModel& model) {
    const Request& req = parser_->get();
    const std::string_view target(req.target().data(), req.target().size());
    const size_t q = target.find('?');
    try {
      const ExampleQuery eq =
          parse_example_query(q == std::string_view::npos ? "" : target.substr(q + 1));
      return reply(200, example_input_npy(model.input_spec(), eq), "application/x-npy");
    } catch (const meshnn::Error& e) {
      return error(400, "bad_request", e.what());
    }
  }

  // A CORS preflight: 204 with what the route allows, when the Origin is one --cors-origin names.
  void preflight(const Route& route) {
    const std::string allow = std::string(route.method()) + ", OPTIONS";
    reply(204, "", "text/plain", false,
          {{"Access-Control-Allow-Methods", allow},
           {"Access-Control-Allow-Headers", "Authorization, X-API-Key, Content-Type, Accept"},
           {"Access-Control-Max-Age", "600"}});
  }

  // The request path with its %XX escapes decoded; false after answering 400 for a bad escape.
  bool decoded_path(std::string& out) {
    const Request& req = parser_->get();
    const std::string_view target(req.target().data(), req.target().size());
    try {
      out = decode_path(target.substr(0, target.find('?')));
      return true;
    } catch (const meshnn::Error& e) {
      error(400, "bad_request", e.what(), true);
      return false;
    }
  }

  // RFC 9112 6.1 / RFC 9110 8.4: a transfer coding other than chunked, or any content coding,
  // is refused (the body would be parsed as something it is not). false after answering.
  bool codings_supported() {
    const Request& req = parser_->get();
    const std::string_view te = sv(req[http::field::transfer_encoding]);
    for (size_t pos = 0; !te.empty() && pos <= te.size();) {
      const size_t comma = std::min(te.find(',', pos), te.size());
      std::string_view t = te.substr(pos, comma - pos);
      while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
      if (!beast::iequals(beast::string_view(t.data(), t.size()), "chunked")) {
        error(501, "not_implemented",
              "Transfer-Encoding: " + std::string(te) + ": only chunked is supported", true);
        return false;
      }
      pos = comma + 1;
    }
    const std::string_view ce = sv(req[http::field::content_encoding]);
    if (!ce.empty() && !beast::iequals(beast::string_view(ce.data(), ce.size()), "identity")) {
      error(415, "unsupported_media_type",
            "Content-Encoding: " + std::string(ce) + ": send the body uncompressed", true);
      return false;
    }
    return true;
  }

  void upgrade() {
    const Request& req = parser_->get();
    const std::string_view target(req.target().data(), req.target().size());
    std::string decoded;
    if (!decoded_path(decoded)) return;
    const std::string_view path = decoded;
    const std::string_view query =
        target.find('?') == std::string_view::npos ? "" : target.substr(target.find('?') + 1);
    cur_.endpoint = "stream";
    const auto match = match_route(path);
    if (!match || match->route->id != RouteId::stream)
      return error(404, "not_found", "WebSockets are served at /v1/models/{name}/stream", true);
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

  // /decode, /vocode, or /encode (`encode`: a WAV in, .npy latents out).
  void one_shot(const std::shared_ptr<const ServedModel>& model, bool encode) {
    const Request& req = parser_->get();
    // The encoder answers latents: .npy only.
    const auto format = encode ? negotiate(sv(req[http::field::accept]), {OutputFormat::npy})
                               : parse_accept(sv(req[http::field::accept]));
    if (encode && !format) {
      return error(406, "not_acceptable", "Accept: /encode answers application/x-npy");
    } else if (!format) {
      return error(406, "not_acceptable",
                   "Accept: none of audio/wav, application/x-npy, audio/L16");
    }
    const BodyType type = parse_content_type(sv(req[http::field::content_type]));
    if (encode && type != BodyType::wav)
      return error(415, "unsupported_media_type",
                   "Content-Type must be audio/wav (the encoder takes a WAV)");
    if (!encode &&
        (type == BodyType::unsupported || (type == BodyType::wav && !model->takes_wave())))
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
          int status = 200;
          std::string body, ctype = content_type_of(fmt);
          double audio = 0;
          try {
            const auto t = Clock::now();
            if (encode) {
              const Tensor z = model->encode(input, self->srv_.threads());  // (B, C, T)
              audio = static_cast<double>(input.dim(2)) / model->sample_rate();
              self->srv_.metrics.audio(model->name(), audio, since(t));
              body = npy_body(z);  // audio-encode's --out bytes
            } else {
              // Under MPI a started call runs to its end: every rank is in it.
              const Tensor y = self->srv_.cfg.mesh_run
                                   ? self->srv_.cfg.mesh_run(*model, input)
                                   : model->run(input, self->srv_.threads(),
                                                [token](int, int, const std::string&) {
                                                  if (token->expired()) throw Cancelled();
                                                });
              const double compute = since(t);
              audio = static_cast<double>(y.dim(2)) / model->sample_rate();
              body = encode_output(y, model->sample_rate(), fmt);
              if (fmt == OutputFormat::l16)
                ctype += "; rate=" + std::to_string(model->sample_rate()) +
                         "; channels=" + std::to_string(y.dim(1));
              self->srv_.metrics.audio(model->name(), audio, compute);
            }
          } catch (const CommError& e) {
            // A rank of the mesh died, hung or stopped: this server cannot answer any more.
            std::fprintf(stderr, "meshnn serve: error id=%s: %s\n", id.c_str(), e.what());
            if (!self->srv_.mesh_failed.exchange(true)) self->srv_.stop_after_mesh_fault();
            if (token->expired()) return;
            status = 503;
            body = error_json(
                "mesh_failed",
                "a rank of the MPI mesh failed; the server is stopping (request id " + id + ")");
            ctype = "application/json";
          } catch (const std::exception& e) {
            if (token->expired()) return;  // the session has answered (504) or the client left
            const ErrorStatus st = classify(e);
            status = st.status;
            if (st.ours())
              std::fprintf(stderr, "meshnn serve: error id=%s: %s\n", id.c_str(), e.what());
            body = error_json(st.code,
                              st.ours() ? "internal error (request id " + id + ")" : e.what());
            ctype = "application/json";
          }
          net::post(self->stream_.get_executor(),
                    [self, status, b = std::move(body), ctype, audio]() mutable {
                      self->on_job_done(status, std::move(b), ctype, audio);
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

  // While a job waits or runs, a readable socket is either the client's close (cancel the job)
  // or its next pipelined request (leave it in the kernel buffer).
  void watch_disconnect() {
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

  void on_job_done(int status, std::string body, const std::string& ctype, double audio) {
    if (!cur_.open || cur_.answered) return;
    if (timer_) timer_->cancel();
    beast::error_code ec;
    stream_.socket().cancel(ec);  // the disconnect watch
    cur_.audio_s = audio;
    reply(status, std::move(body), ctype);
  }

  void unauthorized() {
    error(401, "unauthorized",
          "missing or wrong API key (Authorization: Bearer KEY or X-API-Key: KEY)");
  }
  void not_allowed(const char* allow) {
    error(405, "method_not_allowed", std::string("use ") + allow, false, 0, allow);
  }

  void error(int status, const std::string& code, const std::string& message, bool close = false,
             int retry_after = 0, const char* allow = nullptr) {
    std::vector<std::pair<std::string, std::string>> extra;
    if (retry_after > 0) extra.emplace_back("Retry-After", std::to_string(retry_after));
    if (allow) extra.emplace_back("Allow", allow);
    if (status == 426) extra.emplace_back("Upgrade", "websocket");
    reply(status, error_json(code, message), "application/json", close, extra);
  }

  void reply(int status, std::string body, const std::string& content_type, bool close = false,
             const std::vector<std::pair<std::string, std::string>>& extra = {}) {
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
  void cors(const Request& req, Response& res) const {
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
  void linger_close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return close_now();
    stream_.expires_after(std::chrono::seconds(2));
    drain_buf_ = std::make_shared<std::array<char, 16384>>();
    drain();
  }
  void drain() {
    stream_.async_read_some(net::buffer(*drain_buf_),
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->close_now();
                              self->drain();
                            });
  }

  void close_now() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

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

// ---- accept loop, signals, drain -------------------------------------------------------------

void do_accept(Server& srv) {
  srv.acceptor.async_accept(
      net::make_strand(srv.ioc), [&srv](beast::error_code ec, tcp::socket socket) {
        if (ec) {
          if (ec == net::error::operation_aborted || !srv.acceptor.is_open()) return;
          return do_accept(srv);  // e.g. EMFILE: keep serving the connections we have
        }
        if (srv.metrics.open_connections.load() >= srv.cfg.max_connections) {
          ++srv.metrics.rejected_connections;
          // A short canned answer (fits any socket buffer), then close.
          static const std::string busy =
              "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: "
              "1\r\nConnection: close\r\nContent-Length: 79\r\n\r\n"
              R"({"error":{"code":"overloaded","message":"too many open connections, retry"}}  )";
          ::send(socket.native_handle(), busy.data(), busy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
          beast::error_code ignored;
          socket.shutdown(tcp::socket::shutdown_both, ignored);
          socket.close(ignored);
        } else {
          std::make_shared<HttpSession>(std::move(socket), srv)->start();
        }
        do_accept(srv);
      });
}

}  // namespace

int run_server(const ServeConfig& config, std::vector<std::shared_ptr<const ServedModel>> models) {
  Server srv(config, std::move(models));
  const std::string host = config.host == "localhost" ? "127.0.0.1" : config.host;
  beast::error_code ec;
  const auto addr = net::ip::make_address(host, ec);
  MESHNN_CHECK(!ec, "--host ", config.host, ": not an IP address");
  const tcp::endpoint ep(addr, static_cast<unsigned short>(config.port));
  srv.acceptor.open(ep.protocol(), ec);
  if (!ec) srv.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) srv.acceptor.bind(ep, ec);
  if (!ec) srv.acceptor.listen(net::socket_base::max_listen_connections, ec);
  MESHNN_CHECK_AS(BackendError, !ec, "cannot listen on ", config.host, ":", config.port, ": ",
                  ec.message());
  const int port = srv.acceptor.local_endpoint().port();
  if (!config.port_file.empty()) {
    // Written beside and renamed, so a reader never sees a partial number; a file that cannot be
    // written stops the server (whoever waits for it would wait forever).
    const std::string tmp = config.port_file + ".tmp";
    bool ok = false;
    {
      std::ofstream f(tmp);
      f << port << "\n";
      f.close();
      ok = f.good();
    }
    if (!ok || std::rename(tmp.c_str(), config.port_file.c_str()) != 0) {
      const int err = errno;
      std::remove(tmp.c_str());
      throw BackendError(detail::concat("--port-file ", config.port_file,
                                        ": cannot write it: ", std::strerror(err ? err : EIO)));
    }
  }
  std::printf("meshnn serve: listening on http://%s:%d (%zu model%s, %d worker%s x %d threads)\n",
              host.find(':') != std::string::npos ? ("[" + host + "]").c_str() : host.c_str(), port,
              srv.models.size(), srv.models.size() == 1 ? "" : "s", config.workers,
              config.workers == 1 ? "" : "s", config.threads_per_worker);
  std::fflush(stdout);

  net::signal_set signals(srv.ioc, SIGINT, SIGTERM);
  net::steady_timer drain_timer(srv.ioc);
  Clock::time_point drain_deadline{}, cut_deadline{};
  bool cut = false;
  // Polled every 20 ms while draining: done when nothing is in flight. At the deadline (or a
  // second signal) every open request and stream is answered 503 and logged; the process stops
  // once those answers are written (or after a short grace for a client that does not read).
  std::function<void()> poll_drain = [&] {
    const int64_t open = srv.in_flight.load();
    if (open > 0 && !cut && Clock::now() >= drain_deadline) {
      std::fprintf(stderr, "meshnn serve: drain ended with %lld request(s) open: answering 503\n",
                   static_cast<long long>(open));
      cut = true;
      cut_deadline = Clock::now() + ms(std::min(2.0, config.write_timeout));
      srv.cut_all();
    }
    if (open <= 0 || (cut && Clock::now() >= cut_deadline)) {
      srv.ioc.stop();
      return;
    }
    drain_timer.expires_after(std::chrono::milliseconds(20));
    drain_timer.async_wait([&](beast::error_code e) {
      if (!e) poll_drain();
    });
  };
  // The listener stays open while draining: /readyz and /healthz keep answering (503 and 200),
  // new work is answered 503 draining, so a load balancer sees the drain instead of a refusal.
  auto begin_drain = [&](const char* why) {
    std::fprintf(stderr, "meshnn serve: %s: draining (%lld in flight, deadline %.0f s)\n", why,
                 static_cast<long long>(srv.in_flight.load()), config.drain_timeout);
    srv.draining = true;
    drain_deadline = Clock::now() + ms(config.drain_timeout);
    poll_drain();
  };
  std::function<void(beast::error_code, int)> on_signal = [&](beast::error_code e, int sig) {
    if (e) return;
    signals.async_wait(on_signal);
    if (srv.draining) {  // a second signal: end the drain now, answering what is open
      std::fprintf(stderr, "meshnn serve: second signal: ending the drain\n");
      drain_deadline = Clock::now();
      return;
    }
    begin_drain(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  };
  signals.async_wait(on_signal);
  srv.stop_after_mesh_fault = [&] {
    net::post(srv.ioc, [&] {
      if (!srv.draining) begin_drain("mesh failure");
    });
  };

  // The cache's age limit is checked as blocks are freed; this timer also frees old blocks while
  // no request comes, so an idle server shrinks back.
  net::steady_timer trim_timer(srv.ioc);
  std::function<void()> trim_idle = [&] {
    if (config.cache_max_age <= 0) return;
    trim_timer.expires_after(ms(std::max(0.25, config.cache_max_age / 2)));
    trim_timer.async_wait([&](beast::error_code e) {
      if (e || srv.draining) return;
      trim_allocation_cache();
      trim_idle();
    });
  };
  trim_idle();

  do_accept(srv);
  std::vector<std::thread> io;
  try {
    for (int i = 0; i < std::max(1, config.io_threads); ++i)
      io.emplace_back([&] { srv.ioc.run(); });
  } catch (const std::system_error& e) {
    srv.ioc.stop();
    for (auto& t : io) t.join();
    throw BackendError(detail::concat("serve: cannot start network thread ", io.size() + 1, " of ",
                                      config.io_threads, ": ", e.what(),
                                      " (lower --io-threads / --workers, or raise the limits)"));
  }
  for (auto& t : io) t.join();
  // From here a signal must not kill the process mid-teardown.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  const int64_t cut_requests = srv.cut_requests.load();
  const int rc = srv.mesh_failed ? 3 : cut_requests > 0 ? 4 : 0;
  if (cut_requests > 0)
    std::fprintf(stderr, "meshnn serve: %lld request(s) cut by the drain (answered 503)\n",
                 static_cast<long long>(cut_requests));
  if (cut || srv.in_flight.load() > 0) {
    // Jobs still running on the workers are abandoned, not waited for.
    std::fprintf(stderr, "meshnn serve: stopped\n");
    std::fflush(nullptr);
    std::_Exit(rc);
  }
  srv.queue.stop();
  std::fprintf(stderr, "meshnn serve: stopped\n");
  return rc;
}

}  // namespace meshnn::serve
