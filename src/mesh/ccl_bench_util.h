// Timing loop shared by bench/ccl_bench.cc and `meshnn bench ccl` (internal).
//
// Byte accounting ("bytes" = what one device must write or read, compared with a single-thread
// memcpy of the same number of bytes, the ceiling):
//   all_gather:     output bytes per device (n · S)
//   reduce_scatter: input bytes per device (S, all read and summed)
//   neighbor_pad:   output bytes per device (S plus the halo rows)
//   memcpy:         S bytes, src → dst, both pre-faulted
// where S is the per-device input size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshnn {
class Device;
}

namespace meshnn::mesh_detail {

enum class BenchOp { all_gather, reduce_scatter, neighbor_pad, memcpy };
const char* bench_op_name(BenchOp op);

// Bytes counted for one op with per-device input size S on a group of n.
double bench_op_bytes(BenchOp op, int64_t S, int n);

// Runs on every device of a mesh (inside run_spmd): `trials` trials of `reps` ops on axis 1 with
// persistent (pre-faulted) outputs; returns seconds per op of each trial on this device, timed
// between two barriers so the slowest device bounds it.
std::vector<double> bench_on_device(Device& d, BenchOp op, int64_t S, int reps, int trials);

// memcpy of S bytes on the calling thread: seconds per copy of each trial.
std::vector<double> bench_memcpy(int64_t S, int reps, int trials);

double median(std::vector<double> v);

}  // namespace meshnn::mesh_detail
