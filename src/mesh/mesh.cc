#include "meshnn/mesh/mesh.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <thread>

#include "core/enum_names.h"
#include "core/env.h"
#include "mesh/local_comm.h"
#include "mesh/mpi_comm.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/world.h"

namespace meshnn {

namespace {
constexpr EnumNames<Backend, 2> kBackendNames{"backend",
                                              {{Backend::local, "local"}, {Backend::mpi, "mpi"}}};
}  // namespace

Backend parse_backend(const std::string& s) {
  if (const auto b = kBackendNames.find(s)) return *b;
  throw InvalidArgument("backend must be local or mpi, got '" + s + "'");
}

MeshConfig parse_mesh(const std::string& s) {
  MeshConfig c;
  const auto x = s.find('x');
  try {
    MESHNN_CHECK(x != std::string::npos, "");
    size_t p1 = 0, p2 = 0;
    c.rows = std::stoi(s.substr(0, x), &p1);
    c.cols = std::stoi(s.substr(x + 1), &p2);
    MESHNN_CHECK(p1 == x && p2 == s.size() - x - 1, "");
  } catch (const std::exception&) {
    throw InvalidArgument("mesh must look like RxC (e.g. 1x2), got '" + s + "'");
  }
  MESHNN_CHECK(c.rows >= 1 && c.cols >= 1, "mesh extents must be ≥ 1, got '", s, "'");
  return c;
}

// ---- Mesh ---------------------------------------------------------------------------------

Mesh::Mesh(int rows, int cols) : rows_(rows), cols_(cols) {
  MESHNN_CHECK(rows >= 1 && cols >= 1 && rows * cols <= 4096, "mesh ", rows, "x", cols,
               ": extents must be ≥ 1");
}

int Mesh::axis_size(int axis) const {
  MESHNN_CHECK(axis == 0 || axis == 1, "mesh axis must be 0 or 1, got ", axis);
  return axis == 0 ? rows_ : cols_;
}

int Mesh::rank_of(int r, int c) const {
  MESHNN_CHECK(r >= 0 && r < rows_ && c >= 0 && c < cols_, "coordinate (", r, ", ", c,
               ") outside mesh ", rows_, "x", cols_);
  return r * cols_ + c;
}

int Mesh::coord(int rank, int axis) const {
  MESHNN_CHECK(rank >= 0 && rank < size(), "rank ", rank, " outside mesh of ", size());
  MESHNN_CHECK(axis == 0 || axis == 1, "mesh axis must be 0 or 1, got ", axis);
  return axis == 0 ? rank / cols_ : rank % cols_;
}

std::vector<int> Mesh::group(int rank, int axis) const {
  std::vector<int> g;
  if (axis == 0) {
    for (int r = 0; r < rows_; ++r) g.push_back(rank_of(r, coord(rank, 1)));
  } else {
    MESHNN_CHECK(axis == 1, "mesh axis must be 0 or 1, got ", axis);
    for (int c = 0; c < cols_; ++c) g.push_back(rank_of(coord(rank, 0), c));
  }
  return g;
}

// ---- Device -------------------------------------------------------------------------------

Device::Device(Mesh mesh, int rank, int threads, Backend backend,
               std::vector<std::shared_ptr<mesh_detail::Communicator>> comms)
    : mesh_(mesh), rank_(rank), threads_(threads), backend_(backend), comms_(std::move(comms)) {
  comms_.resize(3);
  ccl_ = std::make_unique<CclManager>(*this, comms_);
}

Device::~Device() = default;

// ---- run_spmd -----------------------------------------------------------------------------

namespace {

int thread_budget(const MeshConfig& cfg, int devices_on_host) {
  if (cfg.threads_per_device > 0) return cfg.threads_per_device;
  return std::max(1, available_cores() / std::max(1, devices_on_host));
}

std::atomic<double> g_default_timeout{-1.0};

void run_local(const MeshConfig& cfg, const std::function<void(Device&)>& fn) {
  const Mesh mesh(cfg.rows, cfg.cols);
  const int threads = thread_budget(cfg, mesh.size());
  if (mesh.size() == 1) {
    // 1×1: no communicator, no thread; the caller's thread is the device.
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    Device dev(mesh, 0, threads, Backend::local, {nullptr, nullptr, nullptr});
    try {
      fn(dev);
    } catch (...) {
      omp_set_num_threads(saved);
      throw;
    }
    omp_set_num_threads(saved);
    return;
  }
  auto state = std::make_shared<mesh_detail::LocalMeshState>(
      mesh, resolve_comm_timeout(cfg.timeout_seconds));
  std::vector<std::thread> workers;
  workers.reserve(mesh.size());
  for (int rank = 0; rank < mesh.size(); ++rank) {
    workers.emplace_back([&, rank] {
      omp_set_num_threads(threads);  // per-thread ICV: this device's parallel regions only
      try {
        std::vector<std::shared_ptr<mesh_detail::Communicator>> comms(3);
        for (int axis = 0; axis < 2; ++axis)
          if (mesh.axis_size(axis) > 1)
            comms[axis] = mesh_detail::make_local_comm(state, rank, axis);
        comms[2] = mesh_detail::make_local_comm(state, rank, 2);
        Device dev(mesh, rank, threads, Backend::local, std::move(comms));
        fn(dev);
        state->set_finished(rank);
      } catch (const std::exception& e) {
        state->abort(rank, std::current_exception(), e.what());
        state->set_finished(rank);
      } catch (...) {
        state->abort(rank, std::current_exception(), "unknown exception");
        state->set_finished(rank);
      }
    });
  }
  for (auto& w : workers) w.join();
  if (auto err = state->first_error()) std::rethrow_exception(err);
}

void run_mpi(const MeshConfig& cfg, const std::function<void(Device&)>& fn) {
  const Mesh mesh(cfg.rows, cfg.cols);
  mesh_detail::MpiMesh m =
      mesh_detail::make_mpi_mesh(mesh, resolve_comm_timeout(cfg.timeout_seconds));
  const int threads = thread_budget(cfg, m.local_ranks);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  try {
    Device dev(mesh, m.rank, threads, Backend::mpi, m.comms);
    m.comms.clear();
    fn(dev);
  } catch (...) {
    omp_set_num_threads(saved);
    throw;
  }
  omp_set_num_threads(saved);
}

}  // namespace

void run_spmd(const MeshConfig& config, const std::function<void(Device&)>& fn) {
  MESHNN_CHECK(config.rows >= 1 && config.cols >= 1, "mesh ", config.rows, "x", config.cols,
               ": extents must be ≥ 1");
  check_thread_count(config.threads_per_device, "threads_per_device");
  MESHNN_CHECK(std::isfinite(config.timeout_seconds), "timeout_seconds must be finite");
  if (config.backend == Backend::mpi)
    run_mpi(config, fn);
  else
    run_local(config, fn);
}

double comm_timeout_seconds() {
  const double set = g_default_timeout.load();
  if (set >= 0) return set;
  if (const auto env = env_value(EnvSwitch::comm_timeout)) {
    char* end = nullptr;
    const double v = std::strtod(env->c_str(), &end);
    MESHNN_CHECK(end && *end == '\0' && std::isfinite(v) && v >= 0, "MESHNN_COMM_TIMEOUT='", *env,
                 "': expected seconds ≥ 0 (0 = wait forever)");
    return v;
  }
  return kDefaultCommTimeoutSeconds;
}

void set_default_comm_timeout(double seconds) {
  MESHNN_CHECK(!std::isnan(seconds), "comm timeout must be a number");
  g_default_timeout.store(seconds);
}

double resolve_comm_timeout(double configured) {
  return configured >= 0 ? configured : comm_timeout_seconds();
}

int process_rank(Backend backend) {
  return backend == Backend::mpi ? mesh_detail::mpi_world_rank() : 0;
}

int process_count(Backend backend) {
  return backend == Backend::mpi ? mesh_detail::mpi_world_size() : 1;
}

void finalize_backends() { mesh_detail::mpi_finalize(); }

std::string broadcast_from_rank0(Backend backend, const std::string& bytes, double wait_seconds) {
  if (backend != Backend::mpi) return bytes;
  const double timeout = comm_timeout_seconds();
  return mesh_detail::mpi_broadcast_bytes(bytes, timeout,
                                          wait_seconds < 0 ? timeout : wait_seconds);
}

void abort_job_if_distributed(int code, const std::string& message) {
  mesh_detail::mpi_abort_if_running(code, message);
}

}  // namespace meshnn
