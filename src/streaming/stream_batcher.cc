// The stream batcher (stream_batcher.h): members, the window that collects their pushes, and the
// stacked push.
#include "streaming/stream_batcher.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <vector>

#include "meshnn/core/error.h"

namespace meshnn::streaming {

namespace {

class Member;

// One pending push: filled in by whichever thread runs the batch.
struct Request {
  Member* member = nullptr;
  Tensor rows, out;
  bool done = false;
  std::exception_ptr error;
};

// What must agree for two pushes to stack: the key, the pushed rows' shape but B, the history's
// counters, and each history tensor's shape but B (or its absence).
// A push of no rows (undefined) never stacks: its member's address makes it unique.
std::string signature(const std::string& key, const Tensor& rows, const graph::StreamState& s,
                      const void* member) {
  std::string sig = key + "|";
  if (!rows.defined()) sig += std::to_string(reinterpret_cast<uintptr_t>(member));
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
  std::mutex mu;  // pending, leading, active, stats
  std::condition_variable cv;
  std::vector<Request*> pending;
  bool leading = false;  // a thread is collecting or running a batch
  size_t active = 0;     // members that pushed since their last flush / reset
  Stats stats;
  std::mutex run_mu;  // held while any member's graph runs

  Tensor push(Member& m, const Tensor& rows);
  void set_active(Member& m, bool on);
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
  Tensor flush() override {
    batcher_->set_active(*this, false);
    const std::lock_guard<std::mutex> run(batcher_->run_mu);
    const ThreadScope t(batcher_->options.threads);
    return graph_->flush();
  }
  void reset() override {
    batcher_->set_active(*this, false);
    const std::lock_guard<std::mutex> run(batcher_->run_mu);
    graph_->reset();
  }
  Node& graph() { return *graph_; }
  const std::string& key() const { return key_; }
  bool active = false;  // under the batcher's mu

 private:
  std::shared_ptr<StreamBatcher::Impl> batcher_;
  NodePtr graph_;
  std::string key_;
};

}  // namespace

void StreamBatcher::Impl::set_active(Member& m, bool on) {
  const std::lock_guard<std::mutex> lock(mu);
  if (m.active == on) return;
  m.active = on;
  if (on)
    ++active;
  else
    --active;
  cv.notify_all();
}

// The first waiting push leads: it waits (up to the window) until every active member has a push
// pending, runs them all, and hands the lead on; the others sleep until their push is done.
Tensor StreamBatcher::Impl::push(Member& m, const Tensor& rows) {
  std::unique_lock<std::mutex> lock(mu);
  if (!m.active) m.active = true, ++active;
  Request r;
  r.member = &m;
  r.rows = rows;
  pending.push_back(&r);
  cv.notify_all();
  while (!r.done) {
    if (leading) {
      cv.wait(lock);
      continue;
    }
    leading = true;
    const auto window = std::chrono::duration<double, std::milli>(options.window_ms);
    cv.wait_for(lock, window, [&] { return pending.size() >= active; });
    std::vector<Request*> batch;
    batch.swap(pending);
    lock.unlock();
    run(batch);
    lock.lock();
    leading = false;
    cv.notify_all();
  }
  if (r.error) std::rethrow_exception(r.error);
  return r.out;
}

// batch: the pushes collected, each from a different member or not → grouped by signature (in
// arrival order; one member's pushes stay in order since a member has at most one pending push).
void StreamBatcher::Impl::run(std::vector<Request*>& batch) {
  const std::lock_guard<std::mutex> run_lock(run_mu);
  const ThreadScope t(options.threads);
  std::map<std::string, size_t> slot;
  std::vector<std::vector<Request*>> groups;
  std::vector<std::vector<graph::StreamState>> states;
  for (Request* r : batch) {
    graph::StreamState s;
    r->member->graph().save_state(s);
    const std::string sig = signature(r->member->key(), r->rows, s, r->member);
    auto [it, fresh] = slot.emplace(sig, groups.size());
    if (fresh) groups.emplace_back(), states.emplace_back();
    groups[it->second].push_back(r);
    states[it->second].push_back(std::move(s));
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    try {
      run_group(groups[g], states[g]);
    } catch (...) {
      for (Request* r : groups[g]) r->error = std::current_exception();
    }
  }
  const std::lock_guard<std::mutex> lock(mu);
  for (auto& group : groups) {
    for (Request* r : group) r->done = true;
    if (group.size() > 1) ++stats.batches, stats.batched_pushes += group.size();
    if (group.size() == 1) ++stats.solo_pushes;
  }
}

// group: pushes of equal signature; states: their members' histories. One push alone runs on its
// member's graph; more are stacked along B onto the first member's graph, pushed, and split.
void StreamBatcher::Impl::run_group(std::vector<Request*>& group,
                                    std::vector<graph::StreamState>& states) {
  if (group.size() == 1) {
    group[0]->out = group[0]->member->graph().push(group[0]->rows);
    return;
  }
  graph::StreamState stacked;
  stacked.counters = states[0].counters;
  std::vector<Tensor> rows, parts;
  for (Request* r : group) rows.push_back(r->rows);
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
    y = g.push(concat(rows, 0));
    g.save_state(after);
  } catch (...) {
    graph::StateReader own(states[0]);  // the first member's graph back to its own history
    g.load_state(own);
    throw;
  }
  int64_t total = 0;
  for (Request* r : group) total += r->rows.dim(0);
  int64_t b0 = 0;
  for (Request* r : group) {
    const int64_t B = r->rows.dim(0);
    graph::StreamState mine;
    mine.counters = after.counters;
    for (const Tensor& t : after.tensors) mine.tensors.push_back(share(t, b0, B, total));
    graph::StateReader in(mine);
    r->member->graph().load_state(in);
    if (y.defined()) r->out = share(y, b0, B, total);
    b0 += B;
  }
}

StreamBatcher::StreamBatcher(const BatcherOptions& options) : impl_(std::make_shared<Impl>()) {
  MESHNN_CHECK_AS(InvalidArgument, options.window_ms >= 0, "stream batch window must be ≥ 0 ms");
  impl_->options = options;
}

StreamBatcher::~StreamBatcher() = default;

std::unique_ptr<StreamEngine> StreamBatcher::join(NodePtr graph, std::string key) {
  return std::make_unique<Member>(impl_, std::move(graph), std::move(key));
}

StreamBatcher::Stats StreamBatcher::stats() const {
  const std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

}  // namespace meshnn::streaming
