// Collective benchmarks: the timing loops of `meshnn-bench ccl` and bench/micro/ccl_bench.cc
// (call them inside run_spmd, on every device). Internal to the benchmarks, not installed.
//
// Byte accounting ("bytes" = what one device must write or read, compared with a single-thread
// memcpy of the same number of bytes, the ceiling):
//   all_gather:     output bytes per device (n · S)
//   reduce_scatter: input bytes per device (S, all read and summed)
//   neighbor_pad:   output bytes per device (S plus the halo rows)
//   memcpy:         S bytes, src → dst, both pre-faulted
//   send_recv:      S bytes (one message, device 0 → device 1)
// where S is the per-device input size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshnn {

class Device;

// send_recv: device 0 streams S-byte messages to device 1 (CclManager::send / recv on axis 1),
// the time per message of a back-to-back stream (the pipeline hand-over cost).
enum class CclBenchOp { all_gather, reduce_scatter, neighbor_pad, memcpy, send_recv };
const char* ccl_bench_op_name(CclBenchOp op);

// Bytes counted for one op with per-device input size S on a group of n.
double ccl_bench_op_bytes(CclBenchOp op, int64_t S, int n);

// Runs on every device of a mesh (inside run_spmd): `trials` trials of `reps` ops on axis 1 with
// persistent (pre-faulted) outputs; returns seconds per op of each trial on this device, timed
// between two barriers so the slowest device bounds it.
std::vector<double> ccl_bench_on_device(Device& d, CclBenchOp op, int64_t S, int reps, int trials);

// A two-stage pipeline on axis 1 (inside run_spmd): per chunk, device 0 computes for `work_s`
// seconds (a busy wait standing in for a layer group) and sends an S-byte activation to device 1,
// which receives it and computes for `work_s`. Returns seconds per chunk over `chunks` chunks,
// timed between two barriers: work_s + the hand-over when the stages overlap, 2·work_s + the
// hand-over when they serialise. Devices other than coordinates 0 and 1 only join the barriers.
// serial = true: the baseline without a pipeline, device 0 does both stages' work per chunk and
// nothing is sent (same timing, same machine load). sleep = true: the work is a sleep, not a busy
// wait, so the overlap is measured without competing for cores (on a machine with fewer free
// cores than stages busy stages cannot overlap, whatever the hand-over does).
double ccl_bench_pipeline_on_device(Device& d, int64_t S, double work_s, int chunks,
                                    bool serial = false, bool sleep = false);

// memcpy of S bytes on the calling thread: seconds per copy of each trial.
std::vector<double> ccl_bench_memcpy(int64_t S, int reps, int trials);

}  // namespace meshnn
