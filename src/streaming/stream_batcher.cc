// The stream batcher (stream_batcher.h): members, the window that collects their pushes, and the
// stacked push.
#include "streaming/stream_batcher.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "meshnn/core/error.h"

namespace meshnn::streaming {

namespace {

class Member;

// One pending push: filled in by whichever thread runs the batch.
struct Request {
  Member* member = nullptr;
  Tensor rows, out;
  bool flush = false;  // the member's flush (rows unused) rather than a push
  int64_t batch = 0;   // the member's batch size (its pushes' dim 0; 0 before its first push)
  bool done = false;
  std::exception_ptr error;
};

// What must agree for two pushes to stack: the key, the pushed rows' shape but B, the history's
// counters, and each history tensor's shape but B (or its absence). Flushes stack with flushes of
// equal histories. A push of no rows (undefined) never stacks: its member's address makes it
// unique.
std::string signature(const std::string& key, const Request& r, const graph::StreamState& s) {
  const Tensor& rows = r.rows;
  std::string sig = key + (r.flush ? "|flush|" : "|");
  if (r.batch == 0) sig += std::to_string(reinterpret_cast<uintptr_t>(r.member));
  for (int d = 1; rows.defined() && d < rows.rank(); ++d) sig += std::to_string(rows.dim(d)) + ",";
  sig += rows.defined() ? "|" : "u|";
  for (int64_t c : s.counters) sig += std::to_string(c) + ",";
  for (const Tensor& t : s.tensors) {
    sig += "|";
    if (!t.defined()) sig += "u";
    for (int d = 1; t.defined() && d < t.rank(); ++d) sig += std::to_string(t.dim(d)) + ",";
  }
  return sig;
}

// Items [b0, b0 + B) of a batch of `total`, from t: (k·total, …), where a graph folds k rows per
// item into dim 0 item by item (LTX's stereo as two batch rows) → (k·B, …).
Tensor share(const Tensor& t, int64_t b0, int64_t B, int64_t total) {
  if (!t.defined()) return t;
  const int64_t k = t.dim(0) / total;
  MESHNN_CHECK(k * total == t.dim(0), "stream batch: a tensor of ", t.dim(0),
               " rows in dim 0 for a batch of ", total);
  return t.narrow(0, k * b0, k * B);
}

}  // namespace

struct StreamBatcher::Impl {
  BatcherOptions options;
  std::mutex mu;  // pending, leading, active, stopping, stats, ran_on
  std::condition_variable cv;
  std::vector<Request*> pending;
  bool leading = false;   // a thread is collecting or running a batch
  bool stopping = false;  // the batcher is gone: pushes lead themselves (no runner)
  size_t active = 0;      // members that pushed since their last flush / reset
  Stats stats;
  std::set<std::thread::id> ran_on;  // threads that ran pushes (Stats::push_threads)
  std::mutex run_mu;                 // held while any member's graph runs
  std::thread runner;

  // The member's push, or its flush (then the member is no longer active), run by the runner.
  Tensor push(Member& m, const Tensor& rows, bool flush = false);
  void set_active(Member& m, bool on);
  // m is no longer active (and its next push may bring another batch size); mu held.
  void deactivate_locked(Member& m);
  // Collects (up to the window) and runs batches until stopping, on the runner thread.
  void runner_loop();
  // The batch of pending pushes: waits (lock held) up to the window until every active member
  // has one pending, takes them, runs them with the lock released, marks them done.
  // runner: the runner thread (stops waiting when the batcher goes).
  void collect_and_run(std::unique_lock<std::mutex>& lock, bool runner);
  void run(std::vector<Request*>& batch);
  void run_group(std::vector<Request*>& group, std::vector<graph::StreamState>& states);
};

namespace {

class Member final : public StreamEngine {
 public:
  Member(std::shared_ptr<StreamBatcher::Impl> b, NodePtr g, std::string key)
      : batcher_(std::move(b)), graph_(std::move(g)), key_(std::move(key)) {}
  ~Member() override { batcher_->set_active(*this, false); }
  Tensor push(const Tensor& rows) override { return batcher_->push(*this, rows); }
  Tensor flush() override { return batcher_->push(*this, Tensor(), /*flush=*/true); }
  void reset() override {
    batcher_->set_active(*this, false);
    const std::lock_guard<std::mutex> run(batcher_->run_mu);
    graph_->reset();
  }
  Node& graph() { return *graph_; }
  const std::string& key() const { return key_; }
  bool active = false;  // under the batcher's mu
  int64_t batch = 0;    // its pushes' batch size since the last flush / reset (under mu)

 private:
  std::shared_ptr<StreamBatcher::Impl> batcher_;
  NodePtr graph_;
  std::string key_;
};

}  // namespace

void StreamBatcher::Impl::set_active(Member& m, bool on) {
  const std::lock_guard<std::mutex> lock(mu);
  if (!on) return deactivate_locked(m);
  if (m.active) return;
  m.active = true;
  ++active;
  cv.notify_all();
}

void StreamBatcher::Impl::deactivate_locked(Member& m) {
  m.batch = 0;
  if (!m.active) return;
  m.active = false;
  --active;
  cv.notify_all();
}

// Pushes are run by the batcher's runner thread: one thread, so one OpenMP team, for every
// batch (with a leading client thread instead, each client that led a batch kept a team of its
// own whose idle threads spun against the running one: 43 % of the samples, docs/benchmarks.md).
// A push waits on the condition variable (passively) until the runner marks it done. Once the
// batcher is gone (members may outlive it) a push leads itself as the runner did.
Tensor StreamBatcher::Impl::push(Member& m, const Tensor& rows, bool flush) {
  std::unique_lock<std::mutex> lock(mu);
  if (!m.active) m.active = true, ++active;
  Request r;
  r.member = &m;
  r.rows = rows;
  r.flush = flush;
  if (!flush && rows.defined()) m.batch = rows.dim(0);
  r.batch = flush || rows.defined() ? m.batch : 0;
  pending.push_back(&r);
  cv.notify_all();
  while (!r.done) {
    if (!stopping || leading) {
      cv.wait(lock);
      continue;
    }
    leading = true;
    collect_and_run(lock, false);
    leading = false;
    cv.notify_all();
  }
  if (flush) deactivate_locked(m);
  if (r.error) std::rethrow_exception(r.error);
  return r.out;
}

void StreamBatcher::Impl::collect_and_run(std::unique_lock<std::mutex>& lock, bool runner) {
  const auto window = std::chrono::duration<double, std::milli>(options.window_ms);
  cv.wait_for(lock, window, [&] { return pending.size() >= active || (runner && stopping); });
  std::vector<Request*> batch;
  batch.swap(pending);
  ran_on.insert(std::this_thread::get_id());
  lock.unlock();
  try {
    run(batch);
  } catch (...) {  // outside a group's push (grouping, bookkeeping): every push of the batch
    const std::exception_ptr e = std::current_exception();
    lock.lock();
    for (Request* r : batch)
      if (!r->done) r->error = e, r->done = true;
    cv.notify_all();
    return;
  }
  lock.lock();
  cv.notify_all();
}

void StreamBatcher::Impl::runner_loop() {
  std::unique_lock<std::mutex> lock(mu);
  leading = true;  // the runner is the only leader while it runs
  for (;;) {
    cv.wait(lock, [&] { return stopping || !pending.empty(); });
    if (stopping) break;
    collect_and_run(lock, true);
  }
  leading = false;
  cv.notify_all();  // pending pushes lead themselves from here on
}

namespace {

// Why lanes: a 32-frame push gives each layer ~10² to 10⁴ rows, too few for two OpenMP threads to
// share a layer well (per row, a 1-thread call at these sizes runs at 0.85-0.96× the time of a
// long one-shot call on one thread, a 2-thread call at 1.08-1.27× of a 2-thread one-shot:
// docs/benchmarks.md "Issue 34 (wave 23)"), while independent stacks of pushes need no
// synchronisation at all. So the lanes are filled in turn with ⌈pushes / lanes⌉ pushes each, a
// group of equal signature cut where a lane is full (each part stacked on its own first member's
// graph, its filters read once per part). Returns each resulting group's lane.
std::vector<int> split_into_lanes(std::vector<std::vector<Request*>>& groups,
                                  std::vector<std::vector<graph::StreamState>>& states, int lanes) {
  size_t total = 0;
  for (const auto& g : groups) total += g.size();
  const size_t cap = (total + lanes - 1) / lanes;
  std::vector<std::vector<Request*>> parts;
  std::vector<std::vector<graph::StreamState>> part_states;
  std::vector<int> lane_of;
  int lane = 0;
  size_t fill = 0;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t at = 0; at < groups[g].size();) {
      const size_t take = std::min(groups[g].size() - at, cap - fill);
      parts.emplace_back(groups[g].begin() + at, groups[g].begin() + at + take);
      part_states.emplace_back(std::make_move_iterator(states[g].begin() + at),
                               std::make_move_iterator(states[g].begin() + at + take));
      lane_of.push_back(lane);
      at += take;
      if ((fill += take) == cap) ++lane, fill = 0;
    }
  groups = std::move(parts);
  states = std::move(part_states);
  return lane_of;
}

}  // namespace

// batch: the pushes collected, each from a different member or not → grouped by signature (in
// arrival order; one member's pushes stay in order since a member has at most one pending push),
// then spread over the lanes (split_into_lanes). Pushes that fill one lane run on all the
// batcher's threads; more lanes run side by side, one thread each, each its own groups in turn.
void StreamBatcher::Impl::run(std::vector<Request*>& batch) {
  const std::lock_guard<std::mutex> run_lock(run_mu);
  const int lanes = resolve_threads(options.threads);
  std::map<std::string, size_t> slot;
  std::vector<std::vector<Request*>> groups;
  std::vector<std::vector<graph::StreamState>> states;
  for (Request* r : batch) {
    graph::StreamState s;
    r->member->graph().save_state(s);
    const std::string sig = signature(r->member->key(), *r, s);
    auto [it, fresh] = slot.emplace(sig, groups.size());
    if (fresh) groups.emplace_back(), states.emplace_back();
    groups[it->second].push_back(r);
    states[it->second].push_back(std::move(s));
  }
  const std::vector<int> lane_of = split_into_lanes(groups, states, lanes);
  const auto run_one = [&](size_t g) {
    try {
      run_group(groups[g], states[g]);
    } catch (...) {
      for (Request* r : groups[g]) r->error = std::current_exception();
    }
  };
  const int used = lane_of.empty() ? 0 : lane_of.back() + 1;
  if (used <= 1) {
    const ThreadScope t(options.threads);
    for (size_t g = 0; g < groups.size(); ++g) run_one(g);
  } else {
#pragma omp parallel num_threads(used)
    {
      const ThreadScope one(1);  // this lane's layers run on its own thread
      const int me = omp_get_thread_num(), team = omp_get_num_threads();
      for (size_t g = 0; g < groups.size(); ++g)
        if (lane_of[g] % team == me) run_one(g);
    }
  }
  const std::lock_guard<std::mutex> lock(mu);
  if (used > 1) ++stats.parallel_batches;
  for (auto& group : groups) {
    for (Request* r : group) r->done = true;
    if (group[0]->flush) {
      if (group.size() > 1) stats.stacked_flushes += static_cast<int64_t>(group.size());
      continue;
    }
    if (group.size() > 1) ++stats.batches, stats.batched_pushes += group.size();
    if (group.size() == 1) ++stats.solo_pushes;
  }
}

// group: pushes of equal signature; states: their members' histories. One push alone runs on its
// member's graph; more are stacked along B onto the first member's graph, pushed, and split.
void StreamBatcher::Impl::run_group(std::vector<Request*>& group,
                                    std::vector<graph::StreamState>& states) {
  if (group.size() == 1) {
    Node& g = group[0]->member->graph();
    group[0]->out = group[0]->flush ? g.flush() : g.push(group[0]->rows);
    return;
  }
  graph::StreamState stacked;
  stacked.counters = states[0].counters;
  std::vector<Tensor> rows, parts;
  const bool flush = group[0]->flush;
  for (Request* r : group)
    if (!flush) rows.push_back(r->rows);
  for (size_t t = 0; t < states[0].tensors.size(); ++t) {
    if (!states[0].tensors[t].defined()) {
      stacked.tensors.emplace_back();
      continue;
    }
    parts.clear();
    for (const auto& s : states) parts.push_back(s.tensors[t]);
    stacked.tensors.push_back(concat(parts, 0));
  }
  Node& g = group[0]->member->graph();
  Tensor y;
  graph::StreamState after;
  try {
    graph::StateReader in(stacked);
    g.load_state(in);
    in.finish();
    y = flush ? g.flush() : g.push(concat(rows, 0));
    if (!flush) g.save_state(after);
  } catch (...) {
    graph::StateReader own(states[0]);  // the first member's graph back to its own history
    g.load_state(own);
    throw;
  }
  int64_t total = 0;
  for (Request* r : group) total += r->batch;
  int64_t b0 = 0;
  for (Request* r : group) {
    const int64_t B = r->batch;
    if (y.defined()) r->out = share(y, b0, B, total);
    if (flush) {  // the stacked graph reset itself; each member's graph starts again too
      r->member->graph().reset();
    } else {
      graph::StreamState mine;
      mine.counters = after.counters;
      for (const Tensor& t : after.tensors) mine.tensors.push_back(share(t, b0, B, total));
      graph::StateReader in(mine);
      r->member->graph().load_state(in);
    }
    b0 += B;
  }
}

StreamBatcher::StreamBatcher(const BatcherOptions& options) : impl_(std::make_shared<Impl>()) {
  MESHNN_CHECK_AS(InvalidArgument, options.window_ms >= 0, "stream batch window must be ≥ 0 ms");
  impl_->options = options;
  Impl* impl = impl_.get();
  impl_->runner = std::thread([impl] { impl->runner_loop(); });
}

// The runner finishes the batch it runs (its pushes get their outputs), then exits; pushes still
// pending, and later ones of members that outlive the batcher, lead themselves.
StreamBatcher::~StreamBatcher() {
  {
    const std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->runner.joinable()) impl_->runner.join();
}

std::unique_ptr<StreamEngine> StreamBatcher::join(NodePtr graph, std::string key) {
  return std::make_unique<Member>(impl_, std::move(graph), std::move(key));
}

StreamBatcher::Stats StreamBatcher::stats() const {
  const std::lock_guard<std::mutex> lock(impl_->mu);
  Stats s = impl_->stats;
  s.push_threads = static_cast<int64_t>(impl_->ran_on.size());
  return s;
}

}  // namespace meshnn::streaming
