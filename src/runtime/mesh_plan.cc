#include "runtime/mesh_plan.h"

#include "meshnn/core/input_checks.h"
#include "meshnn/layers/time_shard.h"
#include "runtime/scale_rule.h"

namespace meshnn::runtime {

MeshSplit split_mesh(int rows, int cols, int64_t items) {
  MeshSplit s;
  if (cols > 1 && items % cols == 0) {
    s.item_parts = cols;
    if (rows > 1) s.time_axes = {0};
  } else {
    for (int a = 0; a < 2; ++a)
      if ((a == 0 ? rows : cols) > 1) s.time_axes.push_back(a);
  }
  if (!s.time_axes.empty()) s.time_parts = s.item_parts > 1 ? rows : rows * cols;
  return s;
}

MeshPlan resolve_mesh(const RunOptions& run, const MeshRequest& request) {
  check_thread_count(run.threads, "threads per device");
  const int64_t items = request.split_items ? request.batch : 1;
  MeshPlan p;
  // "auto" on the local backend: one device whose OpenMP team spans the cores (threads, or 0 =
  // all of them). Measured on the 2-core AVX-512 machine (docs/benchmarks.md, "Mesh auto"): with
  // the Winograd convolutions, 1x1 with 2 threads decodes 4 s of LTX-2.3 audio in 2.75 s against
  // 2.91 s for 1x2 with one thread per device on a quiet machine; one device also needs no halos
  // and half the plans. A mesh is an explicit choice.
  if (run.mesh == "auto") {
    if (run.backend == Backend::mpi)
      p.mesh = auto_mpi_mesh(request.kind, request.seconds, request.cost, items);
  } else {
    p.mesh = parse_mesh(run.mesh);
  }
  p.mesh.backend = run.backend;
  p.mesh.threads_per_device = run.threads;
  p.split = split_mesh(p.mesh.rows, p.mesh.cols, items);
  p.batch = request.batch;
  check_time_split(request.frames, p.split.time_parts, request.min_rows, request.what);
  return p;
}

MeshPlan whole_call_on(const MeshConfig& mesh) {
  MeshPlan p;
  p.mesh = mesh;
  return p;
}

}  // namespace meshnn::runtime
