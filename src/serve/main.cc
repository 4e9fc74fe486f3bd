// meshnn-serve: the loaded decoders behind HTTP and WebSocket endpoints (docs/serve.md). `meshnn
// serve ARGS` runs this program with the same ARGS (src/cli/exec_program.cc). Exit codes: 0 ok, 1
// runtime error (meshnn::Error), 2 usage error, and the server's own (docs/serve.md, "Stopping").
// Under --backend mpi a runtime error on any rank aborts the whole job (MPI_Abort, code 1).
#include <boost/asio/ip/address.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli/audio_common.h"
#include "cli/failure.h"
#include "cli/numeric_option.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/log.h"
#include "meshnn/core/memory.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/io/output.h"
#include "meshnn/mesh/mesh.h"
#include "meshnn/mesh/world.h"
#include "serve/http.h"
#include "serve/models.h"
#include "serve/mpi.h"

namespace meshnn::serve {
namespace {

using cli::add_int_option;
using cli::add_real_option;
using cli::kMaxSeconds;
using cli::RealRange;

constexpr int kMaxWorkers = 256;      // compute workers: far above any core count served
constexpr int kMaxCount = 1'000'000;  // queue slots, connections

struct Args {
  std::vector<std::string> models;
  std::string precision = "fp32", api_key_env = "MESHNN_API_KEY", backend = "local", mesh;
  double max_request_mb = 64;
  bool insecure = false, allow_unknown_config = false;
  ServeConfig cfg;
};

// A bind other than loopback needs a key unless --insecure says otherwise.
void check_exposure(const Args& a) {
  const std::string host = a.cfg.host == "localhost" ? "127.0.0.1" : a.cfg.host;
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(host, ec);
  MESHNN_CHECK(!ec, "--host ", a.cfg.host, ": not an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)");
  MESHNN_CHECK(addr.is_loopback() || !a.cfg.api_key.empty() || a.insecure, "--host ", a.cfg.host,
               " is reachable from other machines: give --api-key (or set ", a.api_key_env,
               "), or --insecure to serve without a key");
}

void run(Args& a) {
  const AllowUnknownConfig lenient(a.allow_unknown_config);  // every config read below
  if (a.cfg.api_key.empty() && !a.api_key_env.empty()) {
    const char* k = std::getenv(a.api_key_env.c_str());
    if (k) a.cfg.api_key = k;
  }
  check_exposure(a);  // every number was bounded when parsed (add_int_option, add_real_option)
  const Backend backend = parse_backend(a.backend);
  MeshConfig mesh;
  if (backend == Backend::mpi) {
    // One mesh runs one request at a time: more workers would only wait for it.
    MESHNN_CHECK(a.cfg.workers == 1,
                 "--backend mpi runs one request at a time on the mesh: "
                 "--workers must be 1 (run replicas for more, docs/serve.md)");
    MESHNN_CHECK(!a.mesh.empty(), "--backend mpi needs --mesh RxC (rows x cols = the ranks)");
    mesh = parse_mesh(a.mesh);
    const int world = process_count(Backend::mpi);
    MESHNN_CHECK(world == mesh.rows * mesh.cols, "--backend mpi --mesh ", a.mesh, " needs ",
                 mesh.rows * mesh.cols, " processes but the launch has ", world, " (mpiexec -n ",
                 mesh.rows * mesh.cols, ")");
  } else {
    MESHNN_CHECK(a.mesh.empty(),
                 "--mesh is for --backend mpi (a local server runs each request "
                 "as the CLI does)");
  }
  if (backend == Backend::local && a.cfg.threads_per_worker == 0)
    a.cfg.threads_per_worker =
        std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / a.cfg.workers);
  a.cfg.max_request_bytes = static_cast<int64_t>(a.max_request_mb * (1 << 20));
  const StagePrecision precision = StagePrecision::parse(a.precision);
  // A server sees many input lengths: without an age limit the tensor cache would keep the blocks
  // of every length (and concurrency) it has ever served, and RSS would step up for hours.
  set_allocation_cache_max_age(a.cfg.cache_max_age);

  std::vector<std::shared_ptr<const ServedModel>> models;
  for (const std::string& spec : a.models) {
    models.push_back(ServedModel::load(spec, precision));
    for (size_t i = 0; i + 1 < models.size(); ++i)
      MESHNN_CHECK(models[i]->name() != models.back()->name(), "--model ", models.back()->name(),
                   " given twice");
    std::fprintf(stderr, "meshnn serve: loaded %s (%s, %d Hz)\n", models.back()->name().c_str(),
                 models.back()->kind_name().c_str(), models.back()->sample_rate());
  }

  if (backend == Backend::mpi && process_rank(Backend::mpi) != 0) {
    const int rc = run_mpi_server(a.cfg, models, mesh, a.cfg.threads_per_worker);
    finalize_backends();
    if (rc != 0) std::exit(rc);
    return;
  }
  // No scratch files: answers are encoded in memory, so no exit path (a mesh failure, a kill) can
  // leave anything behind.
  std::signal(SIGPIPE, SIG_IGN);
  const int rc = backend == Backend::mpi
                     ? run_mpi_server(a.cfg, models, mesh, a.cfg.threads_per_worker)
                     : run_server(a.cfg, models);
  if (backend == Backend::mpi) finalize_backends();
  if (rc != 0) std::exit(rc);
}

// The options of `meshnn serve` / meshnn-serve, in the order --help lists them: what is served
// and how it computes, then the bounds, then who may call it and how it runs.
void add_compute_options(CLI::App* cmd, Args* a) {
  const std::string kinds =
      cli::checkpoint_help(cli::registered_models([](const AudioModelEntry&) { return true; }));
  cmd->add_option("--model", a->models,
                  "NAME=PATH, repeatable: anything the audio model registry loads (" + kinds +
                      "); the model is found from it")
      ->required();
  cmd->add_option("--host", a->cfg.host, "address to listen on")->capture_default_str();
  add_int_option(cmd, "--port", a->cfg.port, 0, 65535, "port (0 = any free port, printed at start)")
      ->capture_default_str();
  add_int_option(cmd, "--workers", a->cfg.workers, 1, kMaxWorkers,
                 "compute workers (concurrent model calls)")
      ->capture_default_str();
  add_int_option(cmd, "--threads-per-worker", a->cfg.threads_per_worker, 0, max_threads(),
                 "OpenMP threads of each call (0 = cores / workers)")
      ->capture_default_str();
  cmd->add_flag(
      "--batch-streams", a->cfg.batch_streams,
      "run the WebSocket streams of one model pushed at once as one batch (with --workers "
      "> 1; docs/streaming.md: correct, not yet faster in serve)");
  add_int_option(cmd, "--io-threads", a->cfg.io_threads, 1, 64,
                 "network threads (never run a model)")
      ->capture_default_str();
  cmd->add_option("--precision", a->precision, cli::kPrecisionHelp)->capture_default_str();
}

void add_limit_options(CLI::App* cmd, Args* a) {
  add_int_option(cmd, "--max-queue", a->cfg.max_queue, 1, kMaxCount,
                 "jobs waiting for a worker before 503 + Retry-After")
      ->capture_default_str();
  add_real_option(cmd, "--max-request-mb", a->max_request_mb, {0, 4096, true},
                  "largest request body / stream message")
      ->capture_default_str();
  add_real_option(cmd, "--max-audio-seconds", a->cfg.max_audio_seconds, {0, kMaxSeconds, true},
                  "longest output (or encode input) of one request or stream input, in audio "
                  "seconds summed over its channels")
      ->capture_default_str();
  const RealRange positive{0, kMaxSeconds, true}, non_negative{0, kMaxSeconds, false};
  add_real_option(cmd, "--request-timeout", a->cfg.request_timeout, positive,
                  "seconds from a request's arrival to its answer (else 504)")
      ->capture_default_str();
  add_real_option(cmd, "--header-timeout", a->cfg.header_timeout, positive,
                  "seconds to receive a request header")
      ->capture_default_str();
  add_real_option(cmd, "--body-timeout", a->cfg.body_timeout, positive,
                  "seconds to receive a request body")
      ->capture_default_str();
  add_real_option(cmd, "--idle-timeout", a->cfg.idle_timeout, positive,
                  "seconds a keep-alive connection or a stream may sit idle")
      ->capture_default_str();
  add_real_option(cmd, "--write-timeout", a->cfg.write_timeout, positive,
                  "seconds for a client to take an answer")
      ->capture_default_str();
  add_int_option(cmd, "--max-connections", a->cfg.max_connections, 1, kMaxCount,
                 "open connections at most")
      ->capture_default_str();
  add_real_option(cmd, "--drain-timeout", a->cfg.drain_timeout, non_negative,
                  "on SIGTERM / SIGINT: seconds in-flight requests get to finish (then 503)")
      ->capture_default_str();
  add_real_option(cmd, "--cache-max-age", a->cfg.cache_max_age, non_negative,
                  "seconds a freed tensor block stays cached for reuse before its memory goes "
                  "back to the system (0 = until reused)")
      ->capture_default_str();
}

void add_access_options(CLI::App* cmd, Args* a) {
  cmd->add_option("--api-key", a->cfg.api_key,
                  "key clients send (Authorization: Bearer KEY or X-API-Key); default from the "
                  "--api-key-env variable");
  cmd->add_option("--api-key-env", a->api_key_env, "environment variable holding the key")
      ->capture_default_str();
  cmd->add_option("--cors-origin", a->cfg.cors_origins,
                  "repeatable: an origin (e.g. https://app.example.com, or * for any) whose pages "
                  "may call the API from a browser (CORS); the page at / needs none");
  cmd->add_flag("--insecure", a->insecure, "allow a non-loopback --host without a key");
  cmd->add_option("--port-file", a->cfg.port_file, "write the bound port to this file");
  cmd->add_option("--backend", a->backend,
                  "local | mpi: under mpiexec, rank 0 serves and every request runs on the "
                  "whole mesh (one at a time; no streams)")
      ->capture_default_str();
  cmd->add_option("--mesh", a->mesh, "with --backend mpi: the mesh RxC (rows x cols = the ranks)");
  cmd->add_flag(
      "--no-access-log", [a](int64_t) { a->cfg.access_log = false; },
      "no access-log line per request on stderr");
  cmd->add_flag("--allow-unknown-config", a->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  cmd->add_option_function<double>(
         "--comm-timeout", [](double s) { set_default_comm_timeout(s); },
         "liveness bound of every collective in seconds (default: MESHNN_COMM_TIMEOUT or 120; 0 = "
         "wait forever)")
      ->check(CLI::NonNegativeNumber);
}

// CLI11 reports a missing required option before an unknown one (`--bogus` alone would answer
// "--model is required"): the first unknown long option of argv, or "" (as the meshnn CLI does).
std::string first_unknown_option(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string tok = argv[i];
    if (tok == "--") break;
    if (tok.rfind("--", 0) != 0) continue;
    const std::string name = tok.substr(0, tok.find('='));
    if (name == "--help") return "";
    if (app.get_option_no_throw(name) == nullptr) return name;
  }
  return "";
}

}  // namespace
}  // namespace meshnn::serve

int main(int argc, char** argv) {
  // Line-buffered stdout so the "listening" line and the stderr log stay in order when piped.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  meshnn::init_logging_from_env();
  // A server loads once and decodes and streams for hours: it starts on the cached filters' file
  // mappings (the fastest load), and a background thread then copies them into its own memory,
  // where steady calls and stream pushes read them faster than from the page cache
  // (docs/filter_cache.md, "Mapped or private"), unless the environment says otherwise.
  ::setenv("MESHNN_FILTER_MEMORY", "background", 0);
  CLI::App app{"Serve the decoders over HTTP and WebSocket (docs/serve.md)"};
  auto args = std::make_shared<meshnn::serve::Args>();
  meshnn::serve::add_compute_options(&app, args.get());
  meshnn::serve::add_limit_options(&app, args.get());
  meshnn::serve::add_access_options(&app, args.get());
  meshnn::io::remove_temp_files_on_signal();
  const std::string unknown = meshnn::serve::first_unknown_option(app, argc, argv);
  if (!unknown.empty()) {
    std::fprintf(stderr, "meshnn serve %s: unknown option (see --help)\n", unknown.c_str());
    return 2;
  }
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // Usage errors exit 2 (CLI11's own codes are 100+); --help exits 0.
      const int rc = app.exit(e);
      return rc == 0 ? 0 : 2;
    }
    meshnn::serve::run(*args);
  } catch (const std::exception& e) {
    return meshnn::cli::report_failure("meshnn", e);  // the exit code of core's error table
  }
  return 0;
}
