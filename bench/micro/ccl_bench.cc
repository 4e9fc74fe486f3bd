// Collective throughput on a local 1×2 mesh (one thread per device) for 64 KiB – 16 MiB per
// device, beside a single-thread memcpy of the same bytes (the ceiling). Bytes per op are those of
// ccl_bench_op_bytes (all_gather: its n·S output; reduce_scatter: its S input;
// neighbor_pad: its padded output). MPI numbers: `meshnn-bench ccl` (Google Benchmark's adaptive
// iteration count cannot keep several MPI ranks in lockstep).
//
// Each benchmark iteration runs the mesh once and times `reps` persistent-buffer ops between two
// barriers (manual time = seconds per op), so thread start-up is not measured.
#include <benchmark/benchmark.h>

#include "e2e/ccl_loops.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace {

using meshnn::CclBenchOp;

int reps_for(int64_t S) { return static_cast<int>(std::max<int64_t>(4, (int64_t{32} << 20) / S)); }

void run_op(benchmark::State& state, CclBenchOp op) {
  const int64_t S = state.range(0);
  meshnn::MeshConfig cfg;
  cfg.rows = 1;
  cfg.cols = 2;
  cfg.threads_per_device = 1;
  for (auto _ : state) {
    double sec = 0;
    meshnn::run_spmd(cfg, [&](meshnn::Device& d) {
      const auto t = meshnn::ccl_bench_on_device(d, op, S, reps_for(S), 1);
      if (d.rank() == 0) sec = t[0];
    });
    state.SetIterationTime(sec);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * meshnn::ccl_bench_op_bytes(op, S, 2)));
}

void BM_LocalAllGather(benchmark::State& s) { run_op(s, CclBenchOp::all_gather); }
void BM_LocalReduceScatter(benchmark::State& s) { run_op(s, CclBenchOp::reduce_scatter); }
void BM_LocalNeighborPad(benchmark::State& s) { run_op(s, CclBenchOp::neighbor_pad); }
void BM_LocalSendRecv(benchmark::State& s) { run_op(s, CclBenchOp::send_recv); }

// memcpy of the all-gather output size (2·S) and of S: the two ceilings the table compares with.
void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  for (auto _ : state) {
    const auto t = meshnn::ccl_bench_memcpy(bytes, reps_for(bytes), 1);
    state.SetIterationTime(t[0]);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

#define MESHNN_CCL_SIZES RangeMultiplier(4)->Range(64 << 10, 16 << 20)
BENCHMARK(BM_LocalAllGather)->MESHNN_CCL_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LocalReduceScatter)->MESHNN_CCL_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LocalNeighborPad)->MESHNN_CCL_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LocalSendRecv)->MESHNN_CCL_SIZES->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memcpy)
    ->RangeMultiplier(2)
    ->Range(64 << 10, 32 << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
