#include "e2e/ccl_loops.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

namespace {
constexpr int64_t kRowBytes = 1024;  // neighbor_pad rows: (1, T, 256) f32, halo of 2 rows each side
constexpr int64_t kPadRows = 2;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

const char* ccl_bench_op_name(CclBenchOp op) {
  switch (op) {
    case CclBenchOp::all_gather:
      return "all_gather";
    case CclBenchOp::reduce_scatter:
      return "reduce_scatter";
    case CclBenchOp::neighbor_pad:
      return "neighbor_pad";
    case CclBenchOp::memcpy:
      return "memcpy";
    case CclBenchOp::send_recv:
      return "send_recv";
  }
  return "?";
}

double ccl_bench_op_bytes(CclBenchOp op, int64_t S, int n) {
  switch (op) {
    case CclBenchOp::all_gather:
      return static_cast<double>(S) * n;
    case CclBenchOp::neighbor_pad:
      return static_cast<double>(S + 2 * kPadRows * kRowBytes);
    default:
      return static_cast<double>(S);
  }
}

std::vector<double> ccl_bench_on_device(Device& d, CclBenchOp op, int64_t S, int reps, int trials) {
  MESHNN_CHECK(S % kRowBytes == 0 && S >= kRowBytes * kPadRows, "bench size ", S,
               " must be a multiple of ", kRowBytes);
  CclManager& ccl = d.ccl();
  const int64_t floats = S / 4;
  const Tensor x =
      op == CclBenchOp::neighbor_pad ? Tensor({1, S / kRowBytes, kRowBytes / 4}) : Tensor({floats});
  auto once = [&] {
    switch (op) {
      case CclBenchOp::all_gather:
        ccl.all_gather(x, 0, 1, true);
        break;
      case CclBenchOp::reduce_scatter:
        ccl.reduce_scatter(x, 0, 1, true);
        break;
      case CclBenchOp::neighbor_pad:
        ccl.neighbor_pad(x, 1, kPadRows, kPadRows, PadMode::zeros, 1, /*persistent=*/true);
        break;
      case CclBenchOp::send_recv:
        if (d.coord(1) == 0) ccl.send(x, 1, 1);
        if (d.coord(1) == 1) ccl.recv(0, 1);
        break;
      default:
        break;
    }
  };
  // Warm-up: fault in both halves of the ping-pong pair.
  once();
  once();
  std::vector<double> out;
  for (int t = 0; t < trials; ++t) {
    ccl.barrier();
    const double t0 = now_s();
    for (int r = 0; r < reps; ++r) once();
    ccl.barrier();
    out.push_back((now_s() - t0) / reps);
  }
  return out;
}

double ccl_bench_pipeline_on_device(Device& d, int64_t S, double work_s, int chunks, bool serial,
                                    bool sleep) {
  CclManager& ccl = d.ccl();
  const Tensor x({std::max<int64_t>(S / 4, 1)});
  auto work = [&] {
    if (sleep) {
      std::this_thread::sleep_for(std::chrono::duration<double>(work_s));
      return;
    }
    const double t0 = now_s();
    while (now_s() - t0 < work_s) {
    }
  };
  ccl.barrier();
  const double t0 = now_s();
  for (int k = 0; k < chunks; ++k) {
    if (serial) {
      if (d.coord(1) == 0) {
        work();
        work();
      }
    } else if (d.coord(1) == 0) {
      work();
      ccl.send(x, 1, 1);
    } else if (d.coord(1) == 1) {
      const Tensor y = ccl.recv(0, 1);
      work();
    }
  }
  ccl.barrier();
  return (now_s() - t0) / chunks;
}

std::vector<double> ccl_bench_memcpy(int64_t S, int reps, int trials) {
  // 64-byte aligned buffers from the tensor allocator, as the collectives' own buffers are: with
  // two std::vectors glibc's memcpy ran some sizes (64 KiB, 260 KiB) at ~3 GB/s on this CPU,
  // an artefact of the heap placement that would flatter the collectives.
  const int64_t floats = (S + 3) / 4;
  Tensor src_t({floats}), dst_t({floats});
  std::memset(src_t.raw(), 1, static_cast<size_t>(S));
  auto* src = static_cast<const uint8_t*>(src_t.raw());
  auto* dst = static_cast<uint8_t*>(dst_t.raw());
  std::vector<double> out;
  for (int t = 0; t < trials; ++t) {
    const double t0 = now_s();
    for (int r = 0; r < reps; ++r) {
      std::memcpy(dst, src, static_cast<size_t>(S));
      asm volatile("" : : "r"(dst) : "memory");  // keep the copy
    }
    out.push_back((now_s() - t0) / reps);
  }
  return out;
}

}  // namespace meshnn
