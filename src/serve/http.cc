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
#include <functional>
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

}  // namespace

}  // namespace internal

int run_server(const ServeConfig& config, std::vector<std::shared_ptr<const ServedModel>> models) {
  using namespace internal;
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
