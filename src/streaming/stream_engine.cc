#include "streaming/stream_engine.h"

#include <omp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>

#include "mesh/mpi_comm.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/log.h"
#include "meshnn/mesh/ccl.h"

namespace meshnn::streaming {

StreamEngine::~StreamEngine() = default;

namespace {

// OpenMP threads of the calling thread for one call, restored after.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) {
    omp_set_num_threads(threads > 0 ? threads : std::max(1, available_cores()));
  }
  ~ThreadScope() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

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

// A blocking FIFO between the caller's thread and the first / last stage. close() wakes every
// waiter; a closed queue throws from push and from pop once it is empty.
class Queue {
 public:
  explicit Queue(size_t capacity) : capacity_(capacity) {}
  void push(Message m) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return closed_ || q_.size() < capacity_; });
    MESHNN_CHECK_AS(BackendError, !closed_, "stream pipeline stopped");
    q_.push_back(std::move(m));
    cv_.notify_all();
  }
  // Blocks for a message; nullopt-like false when closed and empty.
  bool pop(Message& m, bool wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (wait) cv_.wait(lock, [&] { return closed_ || !q_.empty(); });
    if (q_.empty()) return false;
    m = std::move(q_.front());
    q_.pop_front();
    cv_.notify_all();
    return true;
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Message> q_;
  bool closed_ = false;
};

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
class LocalPipeline final : public StreamEngine {
 public:
  LocalPipeline(std::vector<NodePtr> groups, MeshConfig mc)
      : groups_(std::move(groups)), in_(2), out_(std::numeric_limits<size_t>::max()) {
    const int n = static_cast<int>(groups_.size());
    // A stage waits for the producer of the stream as long as it takes (a live TTS front end
    // may pause for minutes); a failing stage still wakes the others (failure propagation).
    mc.timeout_seconds = 0;
    runner_ = std::thread([this, mc, n] {
      try {
        run_spmd(mc, [&](Device& d) {
          const int k = d.coord(1);
          for (;;) {
            Message m;
            if (k == 0) {
              if (!in_.pop(m, true)) m.kind = Kind::close;
            } else {
              m = recv_message(d.ccl(), k - 1);
            }
            const bool last_msg = m.kind == Kind::close;
            for (Message& o : stage_step(*groups_[k], std::move(m))) {
              if (k == n - 1) {
                if (o.kind != Kind::rows || has_rows(o.rows)) out_.push(std::move(o));
              } else {
                send_message(d.ccl(), o, k + 1);
              }
            }
            if (last_msg) return;
          }
        });
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = std::current_exception();
      }
      in_.close();
      out_.close();
    });
  }
  ~LocalPipeline() override {
    try {
      in_.push({Kind::close, Tensor()});
    } catch (...) {
    }
    runner_.join();
  }

  Tensor push(const Tensor& rows) override {
    send({Kind::rows, rows});
    std::vector<Tensor> parts;
    Message m;
    while (out_.pop(m, false))
      if (m.kind == Kind::rows) parts.push_back(m.rows);
    rethrow();
    return cat_rows(parts);
  }
  Tensor flush() override { return wait_for(Kind::flush); }
  void reset() override { wait_for(Kind::reset); }

 private:
  void send(Message m) {
    try {
      in_.push(std::move(m));
    } catch (const BackendError&) {
      rethrow();
      throw;
    }
  }
  // Sends a marker and collects the rows that come out before it.
  Tensor wait_for(Kind kind) {
    send({kind, Tensor()});
    std::vector<Tensor> parts;
    for (Message m;;) {
      if (!out_.pop(m, true)) {
        rethrow();
        throw BackendError("stream pipeline stopped");
      }
      if (m.kind == kind) break;
      if (m.kind == Kind::rows && kind == Kind::flush) parts.push_back(m.rows);
    }
    return cat_rows(parts);
  }
  void rethrow() {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_) std::rethrow_exception(error_);
  }

  std::vector<NodePtr> groups_;
  Queue in_, out_;
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
