#include "streaming/stream_engine.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <thread>

#include "core/bounded_queue.h"
#include "mesh/mpi_comm.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/log.h"
#include "meshnn/mesh/ccl.h"

namespace meshnn::streaming {

StreamEngine::~StreamEngine() = default;

int resolve_threads(int threads) { return threads > 0 ? threads : std::max(1, available_cores()); }

ThreadScope::ThreadScope(int threads) : saved_(omp_get_max_threads()) {
  omp_set_num_threads(resolve_threads(threads));
}
ThreadScope::~ThreadScope() { omp_set_num_threads(saved_); }

namespace {

bool has_rows(const Tensor& t) { return t.defined() && t.dim(1) > 0; }

Tensor cat_rows(std::vector<Tensor>& parts) {
  if (parts.empty()) return Tensor();
  Tensor y = parts.size() == 1 ? parts[0] : concat(parts, 1);
  parts.clear();
  return y;
}

class SingleDevice final : public StreamEngine {
 public:
  SingleDevice(NodePtr g, int threads) : g_(std::move(g)), threads_(threads) {}
  Tensor push(const Tensor& rows) override {
    ThreadScope t(threads_);
    return g_->push(rows);
  }
  Tensor flush() override {
    ThreadScope t(threads_);
    return g_->flush();
  }
  void reset() override { g_->reset(); }

 private:
  NodePtr g_;
  int threads_;
};

// ---- pipeline ----------------------------------------------------------------------------------

// What travels along the pipeline: rows, or a marker that every stage passes on in order.
enum class Kind : int64_t { rows = 0, flush = 1, reset = 2, close = 3 };
struct Message {
  Kind kind = Kind::rows;
  Tensor rows;  // Kind::rows only; may be undefined (nothing final yet)
};

// The FIFOs between the caller's thread and the first / last stage (core's BoundedQueue): close()
// wakes every waiter; the caller's waits are bounded (poll()) so that it can check the stages'
// liveness between waits.
using Queue = BoundedQueue<Message>;

// Stage k's hand-over to stage k + 1 along mesh axis 1: a two-value header (kind, has rows), then
// the rows when there are any.
void send_message(CclManager& ccl, const Message& m, int to) {
  const bool rows = m.kind == Kind::rows && has_rows(m.rows);
  ccl.send(Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(m.kind), rows}, {2}), to,
           1);
  if (rows) ccl.send(m.rows, to, 1);
}

Message recv_message(CclManager& ccl, int from) {
  const Tensor h = ccl.recv(from, 1);
  MESHNN_CHECK_AS(CommError, h.dtype() == DType::i64 && h.numel() == 2,
                  "stream pipeline: malformed hand-over header from stage ", from);
  Message m;
  m.kind = static_cast<Kind>(h.data<int64_t>()[0]);
  if (h.data<int64_t>()[1]) m.rows = ccl.recv(from, 1);
  return m;
}

// One stage's reaction to a message: the messages it passes on (rows before the marker).
std::vector<Message> stage_step(Node& group, Message m) {
  std::vector<Message> out;
  switch (m.kind) {
    case Kind::rows:
      out.push_back({Kind::rows, group.push(m.rows)});
      break;
    case Kind::flush:
      out.push_back({Kind::rows, group.flush()});
      out.push_back({Kind::flush, Tensor()});
      break;
    case Kind::reset:
      group.reset();
      out.push_back({Kind::reset, Tensor()});
      break;
    case Kind::close:
      out.push_back({Kind::close, Tensor()});
      break;
  }
  return out;
}

// The operators cut into `parts` contiguous groups of about equal cost, each group a sequence.
std::vector<NodePtr> cut_into_groups(std::vector<NodePtr> ops, const std::vector<double>& cost,
                                     int parts) {
  const std::vector<size_t> cuts = balanced_cuts(cost, parts);
  std::vector<NodePtr> groups;
  for (int k = 0; k < parts; ++k) {
    std::vector<NodePtr> g;
    double sum = 0;
    for (size_t i = cuts[k]; i < cuts[k + 1]; ++i) {
      sum += cost[i];
      g.push_back(std::move(ops[i]));
    }
    log_info(detail::concat("stream pipeline: stage ", k, " runs operators [", cuts[k], ", ",
                            cuts[k + 1], "), measured ", sum * 1e3, " ms per calibration chunk"));
    groups.push_back(graph::sequence(std::move(g)));
  }
  return groups;
}

// Local backend: one thread per device for the engine's life; the caller talks to stage 0 and
// hears from the last stage through queues, the stages talk through the collective layer.
//
// Liveness: a stage waits for its upstream as long as it takes, because an idle pipeline is not a
// fault (a live TTS front end may pause for minutes between pushes, and then every stage waits).
// What is bounded is a stage that is computing: each stage stamps the start of the step it is in,
// and the caller, whenever it waits on the pipeline (and at every call), checks that no stage has
// been inside one step for longer than the liveness bound (MeshConfig::timeout_seconds, else
// MESHNN_COMM_TIMEOUT / --comm-timeout, 0 = forever). Past it the pipeline stops with a CommError
// naming the stage; the stuck stage's thread is joined when the stream is destroyed, so the
// destructor waits for that step to end (a thread cannot be cancelled safely).
class LocalPipeline final : public StreamEngine {
 public:
  LocalPipeline(std::vector<NodePtr> groups, MeshConfig mc)
      : groups_(std::move(groups)),
        in_(2),
        out_(std::numeric_limits<size_t>::max()),
        bound_(resolve_comm_timeout(mc.timeout_seconds)),
        step_start_(std::make_unique<std::atomic<int64_t>[]>(groups_.size())) {
    const int n = static_cast<int>(groups_.size());
    for (int k = 0; k < n; ++k) step_start_[k].store(kIdle);
    // Stage-to-stage waits are unbounded (see above); the caller bounds the computing stages.
    mc.timeout_seconds = 0;
    runner_ = std::thread([this, mc, n] {
      try {
        run_spmd(mc, [&](Device& d) {
          const int k = d.coord(1);
          for (;;) {
            Message m;
            if (k == 0) {
              if (in_.pop(m) != Queue::Pop::got) m.kind = Kind::close;
            } else {
              m = recv_message(d.ccl(), k - 1);
            }
            const bool last_msg = m.kind == Kind::close;
            step_start_[k].store(now_ns());
            std::vector<Message> outs = stage_step(*groups_[k], std::move(m));
            step_start_[k].store(kIdle);
            for (Message& o : outs) {
              if (k == n - 1) {
                if ((o.kind != Kind::rows || has_rows(o.rows)) &&
                    out_.push(o) == Queue::Push::closed)
                  throw BackendError("stream pipeline stopped");
              } else {
                send_message(d.ccl(), o, k + 1);
              }
            }
            if (last_msg) return;
          }
        });
      } catch (...) {
        fail(std::current_exception());
      }
      in_.close();
      out_.close();
    });
  }
  ~LocalPipeline() override {
    (void)in_.push(Message{Kind::close, Tensor()});  // refused when the pipeline has stopped
    runner_.join();
  }

  Tensor push(const Tensor& rows) override {
    send({Kind::rows, rows});
    std::vector<Tensor> parts;
    Message m;
    while (out_.pop(m, Queue::Wait::zero()) == Queue::Pop::got)
      if (m.kind == Kind::rows) parts.push_back(m.rows);
    check_liveness();
    rethrow();
    return cat_rows(parts);
  }
  Tensor flush() override { return wait_for(Kind::flush); }
  void reset() override { wait_for(Kind::reset); }

 private:
  static constexpr int64_t kIdle = -1;
  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  // How often a waiting caller looks at the stages: a tenth of the bound, 1 ms … 100 ms.
  Queue::Wait poll() const {
    if (bound_ <= 0) return Queue::kForever;
    const double s = std::clamp(bound_ / 10, 1e-3, 0.1);
    return std::chrono::duration_cast<Queue::Wait>(std::chrono::duration<double>(s));
  }
  void send(Message m) {
    for (;;) {
      const Queue::Push r = in_.push(m, poll());
      if (r == Queue::Push::ok) break;
      if (r == Queue::Push::closed) {
        rethrow();
        throw BackendError("stream pipeline stopped");
      }
      check_liveness();
    }
    check_liveness();
  }
  // Sends a marker and collects the rows that come out before it.
  Tensor wait_for(Kind kind) {
    send({kind, Tensor()});
    std::vector<Tensor> parts;
    for (Message m;;) {
      const Queue::Pop r = out_.pop(m, poll());
      if (r == Queue::Pop::empty) {
        check_liveness();
        continue;
      }
      if (r == Queue::Pop::closed) {
        rethrow();
        throw BackendError("stream pipeline stopped");
      }
      if (m.kind == kind) break;
      if (m.kind == Kind::rows && kind == Kind::flush) parts.push_back(m.rows);
    }
    return cat_rows(parts);
  }
  // A stage inside one step for longer than the bound stops the pipeline (CommError naming it).
  void check_liveness() {
    if (bound_ <= 0) return;
    const int64_t now = now_ns();
    const int n = static_cast<int>(groups_.size());
    for (int k = 0; k < n; ++k) {
      const int64_t t0 = step_start_[k].load();
      if (t0 == kIdle || static_cast<double>(now - t0) * 1e-9 <= bound_) continue;
      fail(std::make_exception_ptr(CommError(
          detail::concat("stream pipeline: liveness timeout, no progress for ", bound_,
                         " s: stage ", k, " of ", n, " (device (0, ", k,
                         ")) has been inside one step for ", static_cast<double>(now - t0) * 1e-9,
                         " s (the bound is MeshConfig::timeout_seconds, else --comm-timeout / "
                         "MESHNN_COMM_TIMEOUT; 0 waits forever)"))));
      in_.close();
      out_.close();
      break;
    }
    rethrow();
  }
  // Keeps the first failure: the errors that follow from stopping the pipeline do not replace it.
  void fail(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_) error_ = std::move(e);
  }
  void rethrow() {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) std::rethrow_exception(error_);
  }

  std::vector<NodePtr> groups_;
  Queue in_, out_;
  double bound_;  // seconds; 0 = no bound
  // Per stage: steady-clock ns at the start of the step it is in, kIdle between steps.
  std::unique_ptr<std::atomic<int64_t>[]> step_start_;
  std::mutex mu_;
  std::exception_ptr error_;
  std::thread runner_;
};

// MPI backend: this process is stage k. Every rank makes the same calls; a call on rank k > 0
// first receives what stage k − 1 made of the same call, so stage k − 1 runs ahead on the next
// call while stage k works (the buffered sends let it run up to two hand-overs ahead).
class MpiPipeline final : public StreamEngine {
 public:
  // ops / cost: the graph's top-level operators and this rank's measured cost of each. The ranks
  // cut at the mean of their measurements, so they agree on the cut.
  MpiPipeline(std::vector<NodePtr> ops, std::vector<double> cost, const MeshConfig& mc)
      : mesh_(mc.rows, mc.cols) {
    // Bounded like every MPI call (a stopped rank ends the job): the CLI feeds an MPI stream from
    // regular files only, so no stage waits on a producer paused for input. An API caller that
    // paces its pushes on a live source must keep the gap under the bound (or set it to 0).
    mesh_detail::MpiMesh m =
        mesh_detail::make_mpi_mesh(mesh_, resolve_comm_timeout(mc.timeout_seconds));
    threads_ = mc.threads_per_device;
    device_ = std::make_unique<Device>(mesh_, m.rank, threads_, Backend::mpi, m.comms);
    k_ = device_->coord(1);
    last_ = mesh_.cols() - 1;
    const int64_t n = static_cast<int64_t>(cost.size());
    const Tensor all = device_->ccl().all_gather(
        Tensor::from_vector(std::vector<float>(cost.begin(), cost.end()), {1, n}), 0, 1);
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0;
      for (int r = 0; r < mesh_.cols(); ++r) sum += all.data<float>()[r * n + i];
      cost[i] = sum / mesh_.cols();
    }
    std::vector<NodePtr> groups = cut_into_groups(std::move(ops), cost, mesh_.cols());
    group_ = std::move(groups[k_]);
  }
  bool returns_output() const override { return k_ == last_; }
  Tensor push(const Tensor& rows) override { return call({Kind::rows, rows}); }
  Tensor flush() override { return call({Kind::flush, Tensor()}); }
  void reset() override { call({Kind::reset, Tensor()}); }

 private:
  Tensor call(Message first) {
    ThreadScope t(threads_);
    std::vector<Tensor> parts;
    // Stage 0 starts from the caller's message; later stages from what the previous one sent,
    // which ends with the same marker (a rows call sends exactly one rows message).
    for (bool done = false; !done;) {
      Message m = k_ == 0 ? first : recv_message(device_->ccl(), k_ - 1);
      done = m.kind == first.kind;
      if (k_ == 0) done = true;
      for (Message& o : stage_step(*group_, std::move(m))) {
        if (k_ == last_) {
          if (o.kind == Kind::rows && has_rows(o.rows)) parts.push_back(o.rows);
        } else {
          send_message(device_->ccl(), o, k_ + 1);
        }
      }
    }
    return cat_rows(parts);
  }

  Mesh mesh_;
  std::unique_ptr<Device> device_;
  NodePtr group_;
  int k_ = 0, last_ = 0, threads_ = 0;
};

}  // namespace

std::unique_ptr<StreamEngine> single_device_engine(NodePtr graph, int threads) {
  return std::make_unique<SingleDevice>(std::move(graph), threads);
}

std::vector<size_t> balanced_cuts(const std::vector<double>& cost, int parts) {
  const size_t n = cost.size();
  MESHNN_CHECK(parts >= 1 && static_cast<size_t>(parts) <= n, "cannot cut ", n, " operators into ",
               parts, " groups");
  std::vector<double> prefix(n + 1, 0.0);
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  // best[p][i]: the smallest possible largest group when the first i operators form p groups.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(parts + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<size_t>> from(parts + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (int p = 1; p <= parts; ++p)
    for (size_t i = p; i <= n; ++i)
      for (size_t j = p - 1; j < i; ++j) {
        const double v = std::max(best[p - 1][j], prefix[i] - prefix[j]);
        if (v < best[p][i]) {
          best[p][i] = v;
          from[p][i] = j;
        }
      }
  std::vector<size_t> cuts(parts + 1);
  cuts[parts] = n;
  for (int p = parts; p >= 1; --p) cuts[p - 1] = from[p][cuts[p]];
  return cuts;
}

std::unique_ptr<StreamEngine> pipeline_engine(NodePtr graph, const MeshConfig& mc,
                                              const Tensor& calibration) {
  MESHNN_CHECK_AS(InvalidArgument, mc.rows == 1 && mc.cols >= 1,
                  "a stream pipeline runs on a 1xN mesh, got ", mc.rows, "x", mc.cols);
  if (mc.cols == 1) return single_device_engine(std::move(graph), mc.threads_per_device);
  std::vector<NodePtr> ops = graph::top_level_nodes(std::move(graph));
  MESHNN_CHECK_AS(InvalidArgument, static_cast<int>(ops.size()) >= mc.cols, "this model has ",
                  ops.size(), " pipeline stages at most; asked for ", mc.cols);
  // Measured cost of each operator on the calibration rows, with one device's thread budget.
  // Pushes until the look-ahead has filled (the later operators get rows only once it has: timing
  // the first pushes undercounts them), then kTimed more pushes timed per operator; then every
  // operator is reset.
  constexpr int kTimed = 2, kMaxFill = 64;
  std::vector<double> cost(ops.size(), 0.0);
  {
    const int per_device = mc.threads_per_device > 0 ? mc.threads_per_device
                                                     : std::max(1, available_cores() / mc.cols);
    ThreadScope t(per_device);
    bool filled = false;
    for (int round = 0, timed = 0; timed < kTimed && round < kMaxFill + kTimed; ++round) {
      Tensor x = calibration;
      for (size_t i = 0; i < ops.size(); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        x = ops[i]->push(x);
        if (filled)
          cost[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      if (filled) ++timed;
      filled = filled || (x.defined() && x.dim(1) > 0);
    }
    for (NodePtr& op : ops) op->reset();
  }
  if (mc.backend == Backend::mpi)
    return std::make_unique<MpiPipeline>(std::move(ops), std::move(cost), mc);
  return std::make_unique<LocalPipeline>(cut_into_groups(std::move(ops), cost, mc.cols), mc);
}

}  // namespace meshnn::streaming
