// The one executor of the runtime: a call's step on every device of its mesh plan.
//
// run_on_mesh launches the mesh (run_spmd), gives each device an object of its pool for the call,
// its share of the batch and its time split (TimeShard over the plan's time axes), and gathers the
// result: device 0's on the local backend (every device of a time line holds the same gathered
// output), this rank's on the mpi backend; a batch split over axis 1 comes back whole (local: each
// group's first time device writes its items; MPI: one all-gather over axis 1 at the end, so every
// rank returns the whole batch). Progress is reported from rank 0. A Tensor result is checked
// finite (check_model_output), naming the last stage a step reported.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/mesh/mesh.h"
#include "runtime/mesh_plan.h"

namespace meshnn::runtime {

// report(i, n, stage): stage i of n has finished (the models' progress callbacks).
using StageFn = std::function<void(int, int, const char*)>;

// What a call tells the executor beside its plan.
struct Call {
  const char* model = nullptr;           // names the model of a non-finite output (null: no check)
  std::string stage = "the last stage";  // blamed for a non-finite output until a step reports
  ProgressFn progress;                   // the caller's, from rank 0 (optional)
  std::mutex* launch_lock = nullptr;     // MPI: calls sharing it launch one at a time (each
                                         // launch creates communicators collectively)
};

// One device's part of a call: items [first, first + count) of the batch, over its time split
// (a default TimeShard when time is not split); whole-time outputs of those items (count, …).
struct Share {
  Device& device;
  int64_t first = 0, count = 0;
  const TimeShard& ts;
  const StageFn& report;
  // x: the call's batch (B, …) → this device's items (count, …) (x itself when they are all).
  Tensor items(const Tensor& x) const { return count == x.dim(0) ? x : x.narrow(0, first, count); }
};

// The devices' Tensor outputs → the call's (the gather rule above).
class Gather {
 public:
  explicit Gather(const MeshPlan& plan) : plan_(plan) {}
  // Device d's output of its share: (count, …), whole time.
  void add(Device& d, const TimeShard& ts, const Tensor& y);
  Tensor result() { return std::move(out_); }

 private:
  const MeshPlan& plan_;
  Tensor out_;
  std::mutex mu_;
};

// Device d's share under `split`: (first item, time split).
int64_t first_item(Device& d, const MeshSplit& split, int64_t count);
TimeShard time_shard(Device& d, const MeshSplit& split);

// take(rank) → a pool lease of an object for device `rank`; step(object, share) → this device's
// result (a Tensor is gathered and checked; another type is device 0's / this rank's as is).
template <class Take, class Step>
auto run_on_mesh(const MeshPlan& plan, const Call& call, const Take& take, const Step& step) {
  using Object = decltype(*take(0));
  using Result = std::decay_t<std::invoke_result_t<const Step&, Object, const Share&>>;
  constexpr bool tensor = std::is_same_v<Result, Tensor>;
  const bool mpi = plan.mesh.backend == Backend::mpi;
  std::unique_lock<std::mutex> serial;
  if (call.launch_lock && mpi) serial = std::unique_lock<std::mutex>(*call.launch_lock);
  MESHNN_CHECK(tensor || plan.split.item_parts == 1, "internal: only tensors gather items");
  const int64_t count = plan.batch / plan.split.item_parts;
  Gather gather(plan);
  Result out{};
  std::string stage = call.stage;
  std::mutex mu;
  run_spmd(plan.mesh, [&](Device& d) {
    auto object = take(d.rank());
    const TimeShard ts = time_shard(d, plan.split);
    const bool keeps = d.rank() == 0 || mpi;
    std::string last = call.stage;
    const StageFn report = [&](int i, int n, const char* s) {
      last = detail::concat("stage ", i, "/", n, " (", s, ")");
      if (d.rank() == 0 && call.progress) call.progress(i, n, s);
    };
    Result y = step(*object, Share{d, first_item(d, plan.split, count), count, ts, report});
    if constexpr (tensor) gather.add(d, ts, y);
    if (!keeps) return;
    std::lock_guard<std::mutex> lock(mu);
    stage = last;
    if constexpr (!tensor) out = std::move(y);
  });
  if constexpr (tensor) {
    out = gather.result();
    if (call.model) check_model_output(out, call.model, stage);
  }
  return out;
}

}  // namespace meshnn::runtime
