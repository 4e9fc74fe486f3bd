// meshnn-bench ccl: all-gather, reduce-scatter and neighbour-pad throughput on a 1×2 mesh, local
// backend vs MPI backend, beside a single-thread memcpy of the same bytes (the ceiling).
//
// MPI numbers come from this same executable relaunched as
//   mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to core -np 2 meshnn-bench ccl
//   --mpi-worker
// whose rank 0 prints "RESULT <op> <bytes per device> <median seconds>" lines that are parsed
// here. Timing is the median over trials, each trial the mean of `reps` back-to-back ops between
// two barriers (so the slower device bounds it); outputs are persistent (pre-faulted) buffers.
#include "meshnn/mesh/ccl.h"

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
#include "cli/numeric_option.h"
#include "e2e/ccl_loops.h"
#include "e2e/util.h"
#include "meshnn/core/error.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {

namespace {

std::string size_str(int64_t b) {
  if (b >= (1 << 20)) return std::to_string(b >> 20) + " MiB";
  return std::to_string(b >> 10) + " KiB";
}

int reps_for(int64_t S) { return static_cast<int>(std::max<int64_t>(4, (int64_t{64} << 20) / S)); }

const CclBenchOp kOps[] = {CclBenchOp::all_gather, CclBenchOp::reduce_scatter,
                           CclBenchOp::neighbor_pad, CclBenchOp::send_recv};

// (op, S) → median seconds per op on a 1×2 mesh of `backend`.
// Key op −1: the two-stage pipeline (ccl_bench_pipeline_on_device) with `pipeline_ms` per stage.
constexpr int kPipelineKey = -1;
constexpr int kSerialKey = -2;  // its serial baseline (one device does both stages)
constexpr int kPipelineChunks = 20;

std::map<std::pair<int, int64_t>, double> run_mesh(Backend backend,
                                                   const std::vector<int64_t>& sizes, int trials,
                                                   bool print_results, double pipeline_ms,
                                                   bool pipeline_sleep) {
  std::map<std::pair<int, int64_t>, double> res;
  MeshConfig cfg;
  cfg.rows = 1;
  cfg.cols = 2;
  cfg.backend = backend;
  cfg.threads_per_device = 1;
  run_spmd(cfg, [&](Device& d) {
    for (CclBenchOp op : kOps)
      for (int64_t S : sizes) {
        const double med = median(ccl_bench_on_device(d, op, S, reps_for(S), trials));
        d.ccl().reset();  // keep at most one size's buffers resident
        if (d.rank() == 0) {
          res[{static_cast<int>(op), S}] = med;
          if (print_results)
            std::printf("RESULT %s %lld %.9g\n", ccl_bench_op_name(op), static_cast<long long>(S),
                        med);
        }
      }
    if (pipeline_ms > 0)
      for (int64_t S : sizes) {
        // Pipeline and serial baseline alternate, so both see the same machine load.
        std::vector<double> t, ts;
        for (int k = 0; k < std::min(trials, 5); ++k) {
          t.push_back(ccl_bench_pipeline_on_device(d, S, pipeline_ms * 1e-3, kPipelineChunks, false,
                                                   pipeline_sleep));
          ts.push_back(ccl_bench_pipeline_on_device(d, S, pipeline_ms * 1e-3, kPipelineChunks, true,
                                                    pipeline_sleep));
        }
        if (d.rank() == 0) {
          res[{kPipelineKey, S}] = median(t);
          res[{kSerialKey, S}] = median(ts);
          if (print_results) {
            std::printf("RESULT pipeline %lld %.9g\n", static_cast<long long>(S), median(t));
            std::printf("RESULT serial %lld %.9g\n", static_cast<long long>(S), median(ts));
          }
        }
      }
  });
  return res;
}

std::map<std::pair<int, int64_t>, double> run_mpi_child(const std::vector<int64_t>& sizes,
                                                        int trials, double pipeline_ms,
                                                        bool pipeline_sleep, std::string& error) {
  std::map<std::pair<int, int64_t>, double> res;
  std::string sizes_arg;  // validated numbers only: nothing of the command line reaches the shell
  for (int64_t s : sizes) sizes_arg += (sizes_arg.empty() ? "" : ",") + std::to_string(s);
  setenv("OMPI_MCA_btl", "^ofi,openib", 0);
  setenv("OMPI_MCA_mtl", "^ofi,psm", 0);
  const std::string cmd =
      "mpiexec.openmpi --allow-run-as-root --oversubscribe --bind-to core -np 2 /proc/" +
      std::to_string(getpid()) + "/exe ccl --mpi-worker --sizes " + sizes_arg + " --trials " +
      std::to_string(trials) + " --pipeline-ms " + std::to_string(pipeline_ms) +
      (pipeline_sleep ? " --pipeline-sleep" : "") + " 2>&1";
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
      for (CclBenchOp o : kOps)
        if (op == ccl_bench_op_name(o)) res[{static_cast<int>(o), S}] = sec;
      if (op == "pipeline") res[{kPipelineKey, S}] = sec;
      if (op == "serial") res[{kSerialKey, S}] = sec;
    } else {
      out += line;
    }
  }
  const int rc = pclose(p);
  if (rc != 0 || res.empty()) error = "MPI run failed (rc " + std::to_string(rc) + "): " + out;
  return res;
}

struct Args {
  std::vector<int64_t> sizes{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20};
  int trials = 9;
  bool no_mpi = false, worker = false, pipeline_sleep = false;
  double pipeline_ms = 0;
};

using Timings = std::map<std::pair<int, int64_t>, double>;

// One row per (collective, size): local and MPI time and bandwidth beside a memcpy of the bytes.
void print_collectives(const Args& a, const Timings& local, const Timings& mpi) {
  std::printf(
      "1x2 mesh, 1 thread per device, median of %d trials; GB/s = bytes per device / time\n",
      a.trials);
  std::printf("%-15s %9s %10s %10s %10s %10s %10s %8s %8s\n", "op", "size/dev", "local us",
              "local GB/s", "mpi us", "mpi GB/s", "memcpy GB/s", "loc/mcpy", "loc/mpi");
  for (CclBenchOp op : kOps)
    for (int64_t s : a.sizes) {
      const double bytes = ccl_bench_op_bytes(op, s, 2);
      const double tl = local.at({static_cast<int>(op), s});
      const double tm =
          median(ccl_bench_memcpy(static_cast<int64_t>(bytes), reps_for(s), a.trials));
      const auto it = mpi.find({static_cast<int>(op), s});
      const double tp = it == mpi.end() ? 0 : it->second;
      char mpi_us[32] = "-", mpi_bw[32] = "-", ratio[32] = "-";
      if (tp > 0) {
        std::snprintf(mpi_us, sizeof mpi_us, "%.1f", tp * 1e6);
        std::snprintf(mpi_bw, sizeof mpi_bw, "%.2f", bytes / tp * 1e-9);
        std::snprintf(ratio, sizeof ratio, "%.2f", tp / tl);
      }
      std::printf("%-15s %9s %10.1f %10.2f %10s %10s %10.2f %8.2f %8s\n", ccl_bench_op_name(op),
                  size_str(s).c_str(), tl * 1e6, bytes / tl * 1e-9, mpi_us, mpi_bw,
                  bytes / tm * 1e-9, tm / tl, ratio);
    }
}

// One row per size: the 2-stage pipeline against its serial baseline, local and MPI.
void print_pipeline(const Args& a, const Timings& local, const Timings& mpi) {
  std::printf(
      "\n2-stage pipeline, %g ms of %s per stage, %d chunks, one hand-over of "
      "size/dev per chunk: ms per chunk (ideal %g overlapped, %g serial); serial = "
      "one device doing both stages, same load\n",
      a.pipeline_ms, a.pipeline_sleep ? "sleep" : "busy work", kPipelineChunks, a.pipeline_ms,
      2 * a.pipeline_ms);
  std::printf("%-15s %9s %10s %10s %10s %10s %10s %10s\n", "", "size/dev", "local", "serial",
              "speed-up", "mpi", "serial", "speed-up");
  for (int64_t s : a.sizes) {
    const double tl = local.at({kPipelineKey, s}), tsl = local.at({kSerialKey, s});
    const auto it = mpi.find({kPipelineKey, s}), its = mpi.find({kSerialKey, s});
    char mpi_ms[32] = "-", mpi_ser[32] = "-", mpi_x[32] = "-";
    if (it != mpi.end() && its != mpi.end()) {
      std::snprintf(mpi_ms, sizeof mpi_ms, "%.3f", it->second * 1e3);
      std::snprintf(mpi_ser, sizeof mpi_ser, "%.3f", its->second * 1e3);
      std::snprintf(mpi_x, sizeof mpi_x, "%.2f", its->second / it->second);
    }
    std::printf("%-15s %9s %10.3f %10.3f %10.2f %10s %10s %10s\n", "pipeline", size_str(s).c_str(),
                tl * 1e3, tsl * 1e3, tsl / tl, mpi_ms, mpi_ser, mpi_x);
  }
}

void run(const Args& a) {
  const std::vector<int64_t>& S = a.sizes;
  if (a.worker) {
    run_mesh(Backend::mpi, S, a.trials, process_rank(Backend::mpi) == 0, a.pipeline_ms,
             a.pipeline_sleep);
    finalize_backends();
    return;
  }
  const auto local = run_mesh(Backend::local, S, a.trials, false, a.pipeline_ms, a.pipeline_sleep);
  std::string mpi_error;
  Timings mpi;
  if (!a.no_mpi) mpi = run_mpi_child(S, a.trials, a.pipeline_ms, a.pipeline_sleep, mpi_error);
  print_collectives(a, local, mpi);
  if (a.pipeline_ms > 0) print_pipeline(a, local, mpi);
  if (!mpi_error.empty()) std::printf("mpi: %s\n", mpi_error.c_str());
}

const Registrar reg("ccl", [](CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("ccl", "Collective throughput on a 1x2 mesh: local vs MPI vs memcpy");
  auto args = std::make_shared<Args>();
  // Sizes: whole 1 KiB rows (the neighbour-pad layout), at least its two halo rows, at most
  // 256 MiB per device.
  add_int_list_option(cmd, "--sizes", args->sizes, int64_t{2} << 10, int64_t{256} << 20,
                      "bytes per device, comma separated (K / M suffixes), multiples of 1K", true)
      ->check(CLI::Validator(
          [](std::string& s) {
            return std::stoll(s) % 1024 == 0 ? std::string() : s + ": not a multiple of 1K";
          },
          "", "multiple of 1K"));
  add_int_option(cmd, "--trials", args->trials, 1, 10000, "trials per point (median reported)");
  cmd->add_flag("--no-mpi", args->no_mpi, "skip the MPI backend");
  cmd->add_flag("--pipeline-sleep", args->pipeline_sleep,
                "the pipeline stages sleep instead of computing (overlap without core contention)");
  add_real_option(cmd, "--pipeline-ms", args->pipeline_ms, {0, 60000},
                  "also time a 2-stage pipeline (send/recv) with this many ms of work per stage");
  cmd->add_flag("--mpi-worker", args->worker, "internal: run as one rank of the MPI measurement")
      ->group("");
  cmd->callback([args] { run(*args); });
});

}  // namespace

}  // namespace meshnn::cli
