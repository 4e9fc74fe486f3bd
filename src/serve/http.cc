// The server's listener side (http.h): the accept loop with its connection cap, then
// run_server's listen, --port-file, signals, drain and exit code. The sessions it starts are
// http_session.h (HTTP) and ws_session.h (WebSocket streams); what they share is
// server.h.
#include "serve/http.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>
#include <thread>

#include "meshnn/core/error.h"
#include "meshnn/core/memory.h"
#include "serve/http_session.h"
#include "serve/server.h"

namespace meshnn::serve {
namespace internal {
namespace {

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

// The listening socket (--host, --port); the port bound (--port 0 picks a free one).
int listen_on(Server& srv, const ServeConfig& config, const std::string& host) {
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
  return srv.acceptor.local_endpoint().port();
}

// --port-file: written beside and renamed, so a reader never sees a partial number; a file that
// cannot be written stops the server (whoever waits for it would wait forever).
void write_port_file(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  bool ok = false;
  {
    std::ofstream f(tmp);
    f << port << "\n";
    f.close();
    ok = f.good();
  }
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw BackendError(detail::concat("--port-file ", path,
                                      ": cannot write it: ", std::strerror(err ? err : EIO)));
  }
}

// Signals, the drain and the idle trim of the allocation cache, run on the server's io_context.
class Lifecycle {
 public:
  Lifecycle(Server& srv, const ServeConfig& config)
      : srv_(srv),
        cfg_(config),
        signals_(srv.ioc, SIGINT, SIGTERM),
        drain_timer_(srv.ioc),
        trim_timer_(srv.ioc) {}
  void start() {
    wait_signal();
    srv_.stop_after_mesh_fault = [this] {
      net::post(srv_.ioc, [this] {
        if (!srv_.draining) begin_drain("mesh failure");
      });
    };
    trim_idle();
  }
  // The drain's deadline passed (or a second signal came) with requests open: they were cut.
  bool cut() const { return cut_; }

 private:
  void wait_signal() {
    signals_.async_wait([this](beast::error_code e, int sig) { on_signal(e, sig); });
  }
  void on_signal(beast::error_code e, int sig) {
    if (e) return;
    wait_signal();
    if (srv_.draining) {  // a second signal: end the drain now, answering what is open
      std::fprintf(stderr, "meshnn serve: second signal: ending the drain\n");
      drain_deadline_ = Clock::now();
      return;
    }
    begin_drain(sig == SIGTERM ? "SIGTERM" : "SIGINT");
  }
  // The listener stays open while draining: /readyz and /healthz keep answering (503 and 200),
  // new work is answered 503 draining, so a load balancer sees the drain instead of a refusal.
  void begin_drain(const char* why) {
    std::fprintf(stderr, "meshnn serve: %s: draining (%lld in flight, deadline %.0f s)\n", why,
                 static_cast<long long>(srv_.in_flight.load()), cfg_.drain_timeout);
    srv_.draining = true;
    drain_deadline_ = Clock::now() + ms(cfg_.drain_timeout);
    poll_drain();
  }
  // Polled every 20 ms while draining: done when nothing is in flight. At the deadline (or a
  // second signal) every open request and stream is answered 503 and logged; the process stops
  // once those answers are written (or after a short grace for a client that does not read).
  void poll_drain() {
    const int64_t open = srv_.in_flight.load();
    if (open > 0 && !cut_ && Clock::now() >= drain_deadline_) {
      std::fprintf(stderr, "meshnn serve: drain ended with %lld request(s) open: answering 503\n",
                   static_cast<long long>(open));
      cut_ = true;
      cut_deadline_ = Clock::now() + ms(std::min(2.0, cfg_.write_timeout));
      srv_.cut_all();
    }
    if (open <= 0 || (cut_ && Clock::now() >= cut_deadline_)) {
      srv_.ioc.stop();
      return;
    }
    drain_timer_.expires_after(std::chrono::milliseconds(20));
    drain_timer_.async_wait([this](beast::error_code e) {
      if (!e) poll_drain();
    });
  }
  // The cache's age limit is checked as blocks are freed; this timer also frees old blocks while
  // no request comes, so an idle server shrinks back.
  void trim_idle() {
    if (cfg_.cache_max_age <= 0) return;
    trim_timer_.expires_after(ms(std::max(0.25, cfg_.cache_max_age / 2)));
    trim_timer_.async_wait([this](beast::error_code e) {
      if (e || srv_.draining) return;
      trim_allocation_cache();
      trim_idle();
    });
  }

  Server& srv_;
  const ServeConfig& cfg_;
  net::signal_set signals_;
  net::steady_timer drain_timer_, trim_timer_;
  Clock::time_point drain_deadline_{}, cut_deadline_{};
  bool cut_ = false;
};

// Runs the network threads until the io_context stops; a thread that cannot start is a
// BackendError after the started ones are stopped.
void run_network(Server& srv, int io_threads) {
  std::vector<std::thread> io;
  try {
    for (int i = 0; i < std::max(1, io_threads); ++i) io.emplace_back([&] { srv.ioc.run(); });
  } catch (const std::system_error& e) {
    srv.ioc.stop();
    for (auto& t : io) t.join();
    throw BackendError(detail::concat("serve: cannot start network thread ", io.size() + 1, " of ",
                                      io_threads, ": ", e.what(),
                                      " (lower --io-threads / --workers, or raise the limits)"));
  }
  for (auto& t : io) t.join();
}

}  // namespace

}  // namespace internal

int run_server(const ServeConfig& config, std::vector<std::shared_ptr<const ServedModel>> models) {
  using namespace internal;
  Server srv(config, std::move(models));
  const std::string host = config.host == "localhost" ? "127.0.0.1" : config.host;
  const int port = listen_on(srv, config, host);
  if (!config.port_file.empty()) write_port_file(config.port_file, port);
  std::printf("meshnn serve: listening on http://%s:%d (%zu model%s, %d worker%s x %d threads)\n",
              host.find(':') != std::string::npos ? ("[" + host + "]").c_str() : host.c_str(), port,
              srv.models.size(), srv.models.size() == 1 ? "" : "s", config.workers,
              config.workers == 1 ? "" : "s", config.threads_per_worker);
  std::fflush(stdout);
  Lifecycle life(srv, config);
  life.start();
  do_accept(srv);
  run_network(srv, config.io_threads);
  // From here a signal must not kill the process mid-teardown.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  const int64_t cut_requests = srv.cut_requests.load();
  const int rc = srv.mesh_failed ? 3 : cut_requests > 0 ? 4 : 0;
  if (cut_requests > 0)
    std::fprintf(stderr, "meshnn serve: %lld request(s) cut by the drain (answered 503)\n",
                 static_cast<long long>(cut_requests));
  if (life.cut() || srv.in_flight.load() > 0) {
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
