// What the network side of `meshnn serve` shares: Beast / Asio names, deadline helpers, the
// cancellation token of a request, and the Server state every session holds (config, models,
// metrics, queue, drain flags, the open sessions). Internal to the serve_* files.
#pragma once

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "serve/http.h"
#include "serve/metrics.h"
#include "serve/work_queue.h"

namespace meshnn::serve::internal {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

inline std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1e3));
}
inline std::string_view sv(beast::string_view s) { return {s.data(), s.size()}; }
inline double since(Clock::time_point t0) {
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

}  // namespace meshnn::serve::internal
