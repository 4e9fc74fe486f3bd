// Where a stream graph runs: on the caller's thread (one device), or as a pipeline over a 1×N
// mesh whose device k runs the k-th group of the graph's top-level operators and hands its output
// rows to device k + 1 through the collective layer's point-to-point sends.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::streaming {

using graph::Node;
using graph::NodePtr;

// A thread count as ThreadScope takes it: `threads`, or all cores for 0.
int resolve_threads(int threads);

// OpenMP threads of the calling thread for one call (0 = all cores), restored after.
class ThreadScope {
 public:
  explicit ThreadScope(int threads);
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

class StreamEngine {
 public:
  virtual ~StreamEngine();
  // rows: (B, n, …) → the output rows available now (undefined or 0 rows when none).
  virtual Tensor push(const Tensor& rows) = 0;
  // End of input → every remaining output row.
  virtual Tensor flush() = 0;
  virtual void reset() = 0;
  // Whether this process receives the output (MPI: only the last stage's rank does).
  virtual bool returns_output() const { return true; }
};

// The graph on the calling thread with `threads` OpenMP threads (0 = all cores).
std::unique_ptr<StreamEngine> single_device_engine(NodePtr graph, int threads);

// The graph's top-level operators (nested sequences flattened) cut into mc.cols contiguous groups
// of about equal cost, measured by timing each operator on pushes of `calibration` rows (pushed
// until output comes out, i.e. the look-ahead has filled, then two more timed; then the operators
// are reset). The costs depend on the rows per push, so `calibration` should be a typical push.
// Local backend: one thread per device, for the life of the engine. MPI backend: this rank runs its
// own group inside push()/flush(); every rank makes the same calls with the same input.
std::unique_ptr<StreamEngine> pipeline_engine(NodePtr graph, const MeshConfig& mc,
                                              const Tensor& calibration);

// Cut points of `cost` (per operator) into `parts` contiguous groups minimising the largest
// group's sum: group k is [cuts[k], cuts[k + 1]) with cuts[0] = 0, cuts[parts] = cost.size().
std::vector<size_t> balanced_cuts(const std::vector<double>& cost, int parts);

}  // namespace meshnn::streaming
