#include "serve/mpi.h"

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "core/bounded_queue.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/world.h"

namespace meshnn::serve {
namespace {

// The command rank 0 broadcasts: 'R' (run) + model name + input tensor, or 'S' (stop).
//   'R' | u32 name length | name | u32 rank | i64 dims[rank] | f32 values (row-major)
constexpr char kRun = 'R', kStop = 'S';

// x: f32 of rank 1..6 (the parsed body: (1, 8, T, 16) latent, (1, M, T) mel or (S,) samples).
std::string run_command(const std::string& model, const Tensor& x) {
  MESHNN_CHECK_AS(BackendError, x.dtype() == DType::f32, "serve --backend mpi: a float32 input");
  const Tensor& c = x;  // tensors are dense row-major
  std::string s(1, kRun);
  auto put = [&s](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
  const uint32_t len = static_cast<uint32_t>(model.size()), rank = static_cast<uint32_t>(c.rank());
  put(&len, sizeof len);
  s += model;
  put(&rank, sizeof rank);
  for (int i = 0; i < c.rank(); ++i) {
    const int64_t d = c.dim(i);
    put(&d, sizeof d);
  }
  put(c.data<float>(), c.nbytes());
  return s;
}

struct Command {
  char op = kStop;
  std::string model;
  Tensor input;
};

// Rank 0 wrote it (same binary): a malformed one is a bug, not bad client input.
Command parse_command(const std::string& s) {
  size_t at = 0;
  auto take = [&](void* p, size_t n) {
    MESHNN_CHECK_AS(BackendError, s.size() - at >= n, "serve --backend mpi: truncated command");
    std::memcpy(p, s.data() + at, n);
    at += n;
  };
  Command c;
  take(&c.op, 1);
  if (c.op == kStop) return c;
  MESHNN_CHECK_AS(BackendError, c.op == kRun, "serve --backend mpi: unknown command");
  uint32_t len = 0, rank = 0;
  take(&len, sizeof len);
  c.model.resize(len);
  take(c.model.data(), len);
  take(&rank, sizeof rank);
  MESHNN_CHECK_AS(BackendError, rank >= 1 && rank <= 6, "serve --backend mpi: bad command rank");
  Shape shape(rank);
  for (auto& d : shape) take(&d, sizeof d);
  c.input = Tensor::empty(shape);
  take(c.input.data<float>(), c.input.nbytes());
  MESHNN_CHECK_AS(BackendError, at == s.size(), "serve --backend mpi: trailing command bytes");
  return c;
}

// Runs the calls of other threads on the thread that calls loop() (the MPI thread), one at a time,
// through core's BoundedQueue (one call waiting while one runs).
class MainThread {
 public:
  // fn's result or its exception; BackendError once stop() has been called.
  Tensor call(const std::function<Tensor()>& fn) {
    std::packaged_task<Tensor()> task([&fn] { return fn(); });
    std::future<Tensor> out = task.get_future();
    MESHNN_CHECK_AS(BackendError, calls_.push(task) == Calls::Push::ok,
                    "serve --backend mpi: the server is stopping (the MPI thread takes no call)");
    return out.get();
  }
  // Until stop(); a call already handed over still runs.
  void loop() {
    while (std::optional<std::packaged_task<Tensor()>> task = calls_.pop()) (*task)();
  }
  void stop() { calls_.close(); }

 private:
  using Calls = BoundedQueue<std::packaged_task<Tensor()>>;
  Calls calls_{1};
};

int lead(ServeConfig config, const std::vector<std::shared_ptr<const ServedModel>>& models,
         const RunOptions& run) {
  MainThread main;
  std::string fault;  // the first CommError: the mesh is gone, every later call fails at once
  config.mesh_run = [&](const ServedModel& model, const Tensor& input) {
    return main.call([&]() -> Tensor {
      if (!fault.empty()) throw CommError(fault);
      try {
        broadcast_from_rank0(Backend::mpi, run_command(model.name(), input));
        return model.run_on_backend(input, run);
      } catch (const CommError& e) {
        fault = e.what();
        throw;
      }
    });
  };
  int rc = 1;
  std::exception_ptr error;
  std::thread server([&] {
    try {
      rc = run_server(config, models);
    } catch (...) {
      error = std::current_exception();
    }
    main.stop();
  });
  main.loop();
  server.join();
  if (!fault.empty()) {
    std::fflush(nullptr);
    abort_job_if_distributed(3, "meshnn serve: the MPI mesh failed (" + fault +
                                    "); ending the job so that a supervisor restarts it");
    return 3;  // a one-rank launch: nothing to end
  }
  // The followers wait for a command: stop them, also when the server could not start.
  broadcast_from_rank0(Backend::mpi, std::string(1, kStop));
  if (error) std::rethrow_exception(error);
  return rc;
}

int follow(const std::vector<std::shared_ptr<const ServedModel>>& models, const RunOptions& run) {
  // mpiexec forwards SIGTERM / SIGINT to every rank: rank 0 drains and then stops us.
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
  for (;;) {
    const Command c = parse_command(broadcast_from_rank0(Backend::mpi, "", 0));
    if (c.op == kStop) return 0;
    const ServedModel* model = nullptr;
    for (const auto& m : models)
      if (m->name() == c.model) model = m.get();
    MESHNN_CHECK_AS(BackendError, model != nullptr, "serve --backend mpi: rank 0 asked for model '",
                    c.model, "', not loaded here (every rank must get the same --model options)");
    try {
      (void)model->run_on_backend(c.input, run);  // rank 0 has the same output and replies
    } catch (const CommError&) {
      throw;  // main's handler ends the job
    } catch (const Error&) {
      // Bad input fails the same checks on every rank: rank 0 answers it (400).
    }
  }
}

}  // namespace

int run_mpi_server(ServeConfig config,
                   const std::vector<std::shared_ptr<const ServedModel>>& models,
                   const MeshConfig& mesh, int threads) {
  RunOptions run;
  run.mesh = std::to_string(mesh.rows) + "x" + std::to_string(mesh.cols);
  run.backend = Backend::mpi;
  run.threads = threads;
  if (process_rank(Backend::mpi) == 0) return lead(std::move(config), models, run);
  return follow(models, run);
}

}  // namespace meshnn::serve
