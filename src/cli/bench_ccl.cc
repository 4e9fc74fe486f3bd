// meshnn bench ccl: all-gather, reduce-scatter and neighbour-pad throughput on a 1×2 mesh, local
// backend vs MPI backend, beside a single-thread memcpy of the same bytes (the ceiling).
//
// MPI numbers come from this same executable relaunched as
//   mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to core -np 2 meshnn bench ccl
//   --mpi-worker
// whose rank 0 prints "RESULT <op> <bytes per device> <median seconds>" lines that are parsed
// here. Timing is the median over trials, each trial the mean of `reps` back-to-back ops between
// two barriers (so the slower device bounds it); outputs are persistent (pre-faulted) buffers.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "mesh/ccl_bench_util.h"
#include "mesh/mpi_comm.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {

namespace {

using mesh_detail::BenchOp;

int64_t parse_size(const std::string& s) {
  size_t pos = 0;
  const int64_t v = std::stoll(s, &pos);
  const std::string unit = s.substr(pos);
  if (unit.empty() || unit == "B") return v;
  if (unit == "K" || unit == "KiB") return v << 10;
  if (unit == "M" || unit == "MiB") return v << 20;
  throw InvalidArgument("size '" + s + "': use a number with K or M");
}

std::string size_str(int64_t b) {
  if (b >= (1 << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

int reps_for(int64_t S) { return static_cast<int>(std::max<int64_t>(4, (int64_t{64} << 20) / S)); }

const BenchOp kOps[] = {BenchOp::all_gather, BenchOp::reduce_scatter, BenchOp::neighbor_pad};

// (op, S) → median seconds per op on a 1×2 mesh of `backend`.
std::map<std::pair<int, int64_t>, double> run_mesh(Backend backend,
                                                   const std::vector<int64_t>& sizes, int trials,
                                                   bool print_results) {
  std::map<std::pair<int, int64_t>, double> res;
  MeshConfig cfg;
  cfg.rows = 1;
  cfg.cols = 2;
  cfg.backend = backend;
  cfg.threads_per_device = 1;
  run_spmd(cfg, [&](Device& d) {
    for (BenchOp op : kOps)
      for (int64_t S : sizes) {
        const double med =
            mesh_detail::median(mesh_detail::bench_on_device(d, op, S, reps_for(S), trials));
        d.ccl().reset();  // keep at most one size's buffers resident
        if (d.rank() == 0) {
          res[{static_cast<int>(op), S}] = med;
          if (print_results)
            std::printf("RESULT %s %lld %.9g\n", mesh_detail::bench_op_name(op),
                        static_cast<long long>(S), med);
        }
      }
  });
  return res;
}

std::map<std::pair<int, int64_t>, double> run_mpi_child(const std::string& sizes_arg, int trials,
                                                        std::string& error) {
  std::map<std::pair<int, int64_t>, double> res;
  setenv("OMPI_MCA_btl", "^ofi,openib", 0);
  setenv("OMPI_MCA_mtl", "^ofi,psm", 0);
  const std::string cmd =
      "mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to core -np 2 /proc/" +
      std::to_string(getpid()) + "/exe bench ccl --mpi-worker --sizes " + sizes_arg + " --trials " +
      std::to_string(trials) + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    error = "cannot run mpiexec.openmpi";
    return res;
  }
  char line[512];
  std::string out;
  while (std::fgets(line, sizeof line, p)) {
    std::istringstream is(line);
    std::string tag, op;
    long long S = 0;
    double sec = 0;
    if ((is >> tag >> op >> S >> sec) && tag == "RESULT") {
      for (BenchOp o : kOps)
        if (op == mesh_detail::bench_op_name(o)) res[{static_cast<int>(o), S}] = sec;
    } else {
      out += line;
    }
  }
  const int rc = pclose(p);
  if (rc != 0 || res.empty()) error = "MPI run failed (rc " + std::to_string(rc) + "): " + out;
  return res;
}

const Registrar reg("bench.ccl", [](CLI::App& app) {
  CLI::App* cmd = bench_parent(app)->add_subcommand(
      "ccl", "Collective throughput on a 1x2 mesh: local vs MPI vs memcpy");
  auto sizes = std::make_shared<std::string>("64K,256K,1M,4M,16M");
  auto trials = std::make_shared<int>(9);
  auto no_mpi = std::make_shared<bool>(false);
  auto worker = std::make_shared<bool>(false);
  cmd->add_option("--sizes", *sizes, "bytes per device, comma separated (K / M suffixes)");
  cmd->add_option("--trials", *trials, "trials per point (median reported)");
  cmd->add_flag("--no-mpi", *no_mpi, "skip the MPI backend");
  cmd->add_flag("--mpi-worker", *worker, "internal: run as one rank of the MPI measurement")
      ->group("");
  cmd->callback([=] {
    std::vector<int64_t> S;
    std::stringstream ss(*sizes);
    for (std::string tok; std::getline(ss, tok, ',');) S.push_back(parse_size(tok));
    if (*worker) {
      run_mesh(Backend::mpi, S, *trials, mesh_detail::mpi_world_rank() == 0);
      mesh_detail::mpi_finalize();
      return;
    }
    const auto local = run_mesh(Backend::local, S, *trials, false);
    std::string mpi_error;
    std::map<std::pair<int, int64_t>, double> mpi;
    if (!*no_mpi) mpi = run_mpi_child(*sizes, *trials, mpi_error);
    std::printf(
        "1x2 mesh, 1 thread per device, median of %d trials; GB/s = bytes per device / time\n",
        *trials);
    std::printf("%-15s %9s %10s %10s %10s %10s %10s %8s %8s\n", "op", "size/dev", "local us",
                "local GB/s", "mpi us", "mpi GB/s", "memcpy GB/s", "loc/mcpy", "loc/mpi");
    for (BenchOp op : kOps)
      for (int64_t s : S) {
        const double bytes = mesh_detail::bench_op_bytes(op, s, 2);
        const double tl = local.at({static_cast<int>(op), s});
        const double tm = mesh_detail::median(
            mesh_detail::bench_memcpy(static_cast<int64_t>(bytes), reps_for(s), *trials));
        const auto it = mpi.find({static_cast<int>(op), s});
        const double tp = it == mpi.end() ? 0 : it->second;
        char mpi_us[32] = "-", mpi_bw[32] = "-", ratio[32] = "-";
        if (tp > 0) {
          std::snprintf(mpi_us, sizeof mpi_us, "%.1f", tp * 1e6);
          std::snprintf(mpi_bw, sizeof mpi_bw, "%.2f", bytes / tp * 1e-9);
          std::snprintf(ratio, sizeof ratio, "%.2f", tp / tl);
        }
        std::printf("%-15s %9s %10.1f %10.2f %10s %10s %10.2f %8.2f %8s\n",
                    mesh_detail::bench_op_name(op), size_str(s).c_str(), tl * 1e6,
                    bytes / tl * 1e-9, mpi_us, mpi_bw, bytes / tm * 1e-9, tm / tl, ratio);
      }
    if (!mpi_error.empty()) std::printf("mpi: %s\n", mpi_error.c_str());
  });
});

}  // namespace

}  // namespace meshnn::cli
