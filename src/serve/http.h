// The network side of `meshnn serve`: an HTTP/1.1 + WebSocket server on Boost.Beast / Asio.
//
// Threads: `io_threads` run the sockets (parsing, routing, writing) and never model compute; the
// compute runs on `workers` threads that take jobs from one bounded queue (--max-queue): a full
// queue answers 503 with Retry-After at once instead of growing memory. Each worker call leases
// its own runner over the shared weights (the public API's pool).
//
// Faults: header, body, write and idle deadlines on every connection (a slowloris or a reader that
// never reads times out without holding a worker); a cap on open connections; a client that goes
// away while its job waits or runs cancels it (a waiting job is dropped, a running one ends at its
// next progress callback); a request past --request-timeout answers 504 and is cancelled the same
// way. SIGTERM / SIGINT: drain — new work is answered 503 (the listener stays open, /readyz says
// 503), in-flight requests get --drain-timeout to finish; at the deadline (or a second signal)
// every request still open is answered 503 and logged, and the exit code is 4 instead of 0.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serve/models.h"

namespace meshnn::serve {

struct ServeConfig {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 = any free port (printed on the "listening" line)
  int workers = 1;
  // WebSocket streams of one model pushed at once run as one batch (StreamGroup; needs workers >
  // 1).
  bool batch_streams = false;
  int threads_per_worker = 0;  // OpenMP threads of each call; 0 = cores / workers
  int io_threads = 2;
  int max_queue = 16;
  int64_t max_request_bytes = 64ll << 20;
  double max_audio_seconds = 600;
  double request_timeout = 120;  // seconds from the request's arrival to its answer
  double header_timeout = 10, body_timeout = 60, idle_timeout = 60, write_timeout = 60;
  double drain_timeout = 30;
  double cache_max_age = 10;  // seconds a freed tensor block stays cached unused (0 = no limit)
  int max_connections = 256;
  std::string api_key;    // "" = no key asked
  std::string port_file;  // written with the bound port once listening ("" = none)
  bool access_log = true;
  // --cors-origin: origins whose pages may call the API ("*" = any); empty = no CORS headers.
  std::vector<std::string> cors_origins;
  // --backend mpi (mpi.h): one-shot calls go through this (one at a time, on the whole mesh)
  // instead of ServedModel::run, and streams are refused (501). A CommError from it (a rank died,
  // hung or stopped) answers 503 and stops the server: run_server returns 3 after the drain.
  std::function<Tensor(const ServedModel&, const Tensor&)> mesh_run;
};

// Runs until SIGTERM / SIGINT (or a mesh failure) and the drain; returns the process exit code
// (0 after a clean drain, 3 after a mesh failure, 4 when the drain cut open requests). A
// BackendError when it cannot listen, write --port-file or start its threads.
int run_server(const ServeConfig& config, std::vector<std::shared_ptr<const ServedModel>> models);

}  // namespace meshnn::serve
