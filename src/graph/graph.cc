// The graph's row algebra, its row buffer and the structural nodes (sequence, fork/join, row maps,
// the pipeline layout). The layer nodes are in layer_nodes.cc.
#include "graph/graph.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <type_traits>

#include "graph/node_rows.h"
#include "meshnn/core/profile.h"
#include "ops/elementwise.h"

namespace meshnn::graph {
namespace {

bool has_rows(const Tensor& t) { return t.defined() && t.rank() >= 2 && t.dim(1) > 0; }

}  // namespace

Node::~Node() = default;

Rows::Rows(int64_t n, int64_t d) {
  MESHNN_CHECK(d != 0, "Rows: zero denominator");
  if (d < 0) n = -n, d = -d;
  const int64_t g = std::gcd(n < 0 ? -n : n, d);
  num = n / (g ? g : 1);
  den = d / (g ? g : 1);
}
int64_t Rows::ceil() const { return ceil_div(num, den); }
int64_t Rows::floor() const { return -ceil_div(-num, den); }
Rows Rows::operator+(const Rows& o) const { return Rows(num * o.den + o.num * den, den * o.den); }
Rows Rows::operator*(const Rows& o) const { return Rows(num * o.num, den * o.den); }

Halo halo_of(const Reach& r) {
  const Rows last_own(-r.rate.den, r.rate.num);  // − 1/rate: the last output's own input row
  return {std::max<int64_t>(0, r.left.ceil()),
          std::max<int64_t>(0, (r.right + Rows(1) + last_own).floor())};
}

int64_t Node::min_shard_rows() const {
  const Halo h = halo_of(reach());
  return std::max<int64_t>({1, h.left, h.right});
}

namespace {
Rows max_rows(const Rows& a, const Rows& b) { return a < b ? b : a; }
// b after a, in a's input rows.
Reach then(const Reach& a, const Reach& b) {
  const Rows back(a.rate.den, a.rate.num);  // a's input rows per output row
  return {a.left + b.left * back, a.right + b.right * back, a.rate * b.rate};
}
}  // namespace

namespace {

// ---- structure
// -----------------------------------------------------------------------------------

class MapRows final : public Node {
 public:
  MapRows(std::string name, int64_t rate, std::function<Tensor(const Tensor&)> fn)
      : name_(std::move(name)), rate_(rate), fn_(std::move(fn)) {}
  Tensor push(const Tensor& in) override {
    // No rows: nothing (the row shape after fn is not known without calling it).
    if (!in.defined() || in.dim(1) == 0) return Tensor();
    ProfileScope prof(name_.c_str());
    Tensor y = fn_(in);
    MESHNN_DCHECK(y.dim(1) == rate_ * in.dim(1), "map_rows rate");
    return y;
  }
  Tensor flush() override { return Tensor(); }
  void reset() override {}
  int64_t final_rows(int64_t n) const override { return rate_ * n; }
  NodePtr fork() const override { return std::make_unique<MapRows>(name_, rate_, fn_); }
  void save_state(StreamState&) const override {}  // stateless
  void load_state(StateReader&) override {}
  int64_t held_rows() const override { return 0; }
  Tensor run(const Tensor& x, const TimeShard&, int64_t) override {
    ProfileScope prof(name_.c_str());
    return fn_(x);
  }
  int64_t out_rows(int64_t n) const override { return rate_ * n; }
  Reach reach() const override { return {Rows(0), Rows(0), Rows(rate_)}; }

 private:
  std::string name_;
  int64_t rate_;
  std::function<Tensor(const Tensor&)> fn_;
};

class DropFirst final : public Node {
 public:
  explicit DropFirst(int64_t n) : n_(n) {}
  Tensor push(const Tensor& in) override {
    if (!in.defined()) return in;
    const int64_t drop = std::clamp<int64_t>(n_ - seen_, 0, in.dim(1));
    seen_ += in.dim(1);
    return drop == 0 ? in : in.narrow(1, drop, in.dim(1) - drop);
  }
  Tensor flush() override {
    reset();
    return Tensor();
  }
  void reset() override { seen_ = 0; }
  int64_t final_rows(int64_t n) const override { return std::max<int64_t>(0, n - n_); }
  NodePtr fork() const override { return std::make_unique<DropFirst>(n_); }
  // Past the dropped rows every count behaves alike.
  void save_state(StreamState& s) const override { s.counters.push_back(std::min(seen_, n_)); }
  void load_state(StateReader& r) override { seen_ = r.counter(); }
  int64_t held_rows() const override { return 0; }
  // Only inside a node whose run() does not call it (upsample2x_causal_conv_node): dropping rows of
  // one shard would break the even split of a time-sharded sequence.
  Tensor run(const Tensor&, const TimeShard&, int64_t) override {
    MESHNN_CHECK(false, "drop_first: streaming only");
    return Tensor();
  }
  int64_t out_rows(int64_t n) const override { return std::max<int64_t>(0, n - n_); }
  // Output row o is input row o + n: aligned with that row, it reads nothing else (the shift is
  // in the row numbering, which out_rows() carries).
  Reach reach() const override { return {Rows(0), Rows(0), Rows(1)}; }

 private:
  int64_t n_, seen_ = 0;
};

Tensor cat_rows(const Tensor& a, const Tensor& b) {
  if (!has_rows(a)) return has_rows(b) || !a.defined() ? b : a;
  if (!has_rows(b)) return a;
  return concat({a, b}, 1);
}

class Sequence final : public Node {
 public:
  explicit Sequence(std::vector<NodePtr> ops) : ops_(std::move(ops)) {}
  Tensor push(const Tensor& in) override {
    Tensor y = in;
    for (auto& op : ops_) y = op->push(y);
    return y;
  }
  Tensor flush() override {
    Tensor y;
    for (auto& op : ops_) {
      Tensor a = y.defined() ? op->push(y) : Tensor();
      y = cat_rows(a, op->flush());
    }
    return y;
  }
  void reset() override {
    for (auto& op : ops_) op->reset();
  }
  int64_t final_rows(int64_t n) const override {
    for (const auto& op : ops_) n = op->final_rows(n);
    return n;
  }
  NodePtr fork() const override {
    std::vector<NodePtr> f;
    for (const auto& op : ops_) f.push_back(op->fork());
    return std::make_unique<Sequence>(std::move(f));
  }
  void save_state(StreamState& s) const override {
    for (const auto& op : ops_) op->save_state(s);
  }
  void load_state(StateReader& r) override {
    for (auto& op : ops_) op->load_state(r);
  }
  int64_t held_rows() const override {
    int64_t h = 0;
    for (const auto& op : ops_) h += op->held_rows();
    return h;
  }
  std::vector<NodePtr> release() { return std::move(ops_); }
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    Tensor y = x;
    for (auto& op : ops_) {
      y = op->run(y, ts, real);
      real = op->out_rows(real);
    }
    return y;
  }
  int64_t out_rows(int64_t n) const override {
    for (const auto& op : ops_) n = op->out_rows(n);
    return n;
  }
  Reach reach() const override {
    Reach r;
    for (const auto& op : ops_) r = then(r, op->reach());
    return r;
  }
  int64_t min_shard_rows() const override {
    int64_t n = 1;
    Rows rate(1);  // the op's input rows per row of the sequence's input
    for (const auto& op : ops_) {
      n = std::max(n, (Rows(op->min_shard_rows()) * Rows(rate.den, rate.num)).ceil());
      rate = rate * op->reach().rate;
    }
    return n;
  }

 private:
  std::vector<NodePtr> ops_;
};

class ForkJoin : public Node {
 public:
  ForkJoin(std::string name, std::vector<NodePtr> branches,
           std::function<Tensor(std::vector<Tensor>&)> combine)
      : name_(std::move(name)),
        branches_(std::move(branches)),
        combine_(std::move(combine)),
        outs_(branches_.size()) {}

  Tensor push(const Tensor& in) override {
    if (!in.defined()) return Tensor();
    for (size_t i = 0; i < branches_.size(); ++i) outs_[i].append(branches_[i]->push(in));
    return produce();
  }
  Tensor flush() override {
    for (size_t i = 0; i < branches_.size(); ++i) outs_[i].append(branches_[i]->flush());
    for (const RowBuffer& o : outs_)
      MESHNN_CHECK(o.end() == outs_[0].end(), name_, ": branches ended at different rows (",
                   o.end(), " vs ", outs_[0].end(), ")");
    Tensor y = outs_[0].has_shape() ? produce() : Tensor();
    reset();
    return y;
  }
  void reset() override {
    for (auto& b : branches_) b->reset();
    for (RowBuffer& o : outs_) o.clear();
    next_ = 0;
  }
  int64_t final_rows(int64_t n) const override {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (const auto& b : branches_) m = std::min(m, b->final_rows(n));
    return m;
  }
  NodePtr fork() const override {
    std::vector<NodePtr> f;
    for (const auto& b : branches_) f.push_back(b->fork());
    return remake(std::move(f));
  }
  // The branches', then the joined rows waiting for the slowest branch (row numbers from next_).
  void save_state(StreamState& s) const override {
    for (const auto& b : branches_) b->save_state(s);
    for (const RowBuffer& o : outs_) o.save(s, next_);
  }
  void load_state(StateReader& r) override {
    for (auto& b : branches_) b->load_state(r);
    for (RowBuffer& o : outs_) o.load(r, 0);
    next_ = 0;
  }
  const std::string& name() const { return name_; }
  std::vector<NodePtr>& branches() { return branches_; }
  // The same join over other branches.
  virtual NodePtr remake(std::vector<NodePtr> branches) const {
    return std::make_unique<ForkJoin>(name_, std::move(branches), combine_);
  }
  int64_t held_rows() const override {
    int64_t h = 0;
    for (size_t i = 0; i < branches_.size(); ++i) h += branches_[i]->held_rows() + outs_[i].rows();
    return h;
  }
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    std::vector<Tensor> parts;
    for (auto& b : branches_) parts.push_back(b->run(x, ts, real));
    ProfileScope prof(name_.c_str());
    return combine_(parts);
  }
  int64_t out_rows(int64_t n) const override { return branches_[0]->out_rows(n); }
  Reach reach() const override {
    Reach r = branches_[0]->reach();
    for (const auto& b : branches_) {
      const Reach x = b->reach();
      MESHNN_CHECK(x.rate == r.rate, name_, ": branches at different rates");
      r.left = max_rows(r.left, x.left);
      r.right = max_rows(r.right, x.right);
    }
    return r;
  }
  int64_t min_shard_rows() const override {
    int64_t n = 1;
    for (const auto& b : branches_) n = std::max(n, b->min_shard_rows());
    return n;
  }

 private:
  Tensor produce() {
    int64_t end = std::numeric_limits<int64_t>::max();
    for (const RowBuffer& o : outs_) end = o.has_shape() ? std::min(end, o.end()) : 0;
    if (end <= next_) return Tensor();  // nothing yet (the combined row shape is not known)
    std::vector<Tensor> parts;
    for (RowBuffer& o : outs_) parts.push_back(o.rows_between(next_, end));
    for (RowBuffer& o : outs_) o.drop_before(end);
    next_ = end;
    ProfileScope prof(name_.c_str());
    return combine_(parts);
  }

  std::string name_;
  std::vector<NodePtr> branches_;
  std::function<Tensor(std::vector<Tensor>&)> combine_;
  std::vector<RowBuffer> outs_;
  int64_t next_ = 0;
};

// x /= n elementwise.
void divide_(Tensor& x, int n) {
  float* q = x.data<float>();
  const float d = static_cast<float>(n);
  for (int64_t e = 0; e < x.numel(); ++e) q[e] /= d;
}

Tensor mean_of(std::vector<Tensor>& p) {
  const int n = static_cast<int>(p.size());
  if (n == 3) {
    ops::mean3(p[0], p[1], p[2], p[0]);
    return p[0];
  }
  Tensor x = p[0].clone();
  for (int j = 1; j < n; ++j) ops::add_(x, p[j]);
  divide_(x, n);
  return x;
}

class MeanJoin final : public ForkJoin {
 public:
  MeanJoin(std::string name, std::vector<NodePtr> branches)
      : ForkJoin(std::move(name), std::move(branches), mean_of) {}
  NodePtr remake(std::vector<NodePtr> branches) const override {
    return std::make_unique<MeanJoin>(name(), std::move(branches));
  }
};

// One shot: the conv runs 'valid' on the nearest-upsampled shard with a halo of one row each side
// (row −1 is the zero front pad; output row r' of the dropped sequence reads upsampled rows
// r' − 1 … r' + 1), so every device keeps 2S rows (no re-partitioning). Streaming: the same three
// steps as nodes.
class Upsample2xCausalConvNode final : public Node {
 public:
  explicit Upsample2xCausalConvNode(const Conv2d& conv) : conv_(conv) {
    MESHNN_CHECK(conv.pad_left() == 2 && conv.pad_right() == 0 && conv.config().stride[0] == 1,
                 conv.name(), ": the ×2 upsampler needs a causal k3 stride-1 conv");
    std::vector<NodePtr> steps;
    steps.push_back(map_rows("upsample_nearest2x", 2, ops::upsample_nearest2x_hw));
    steps.push_back(conv_node(conv));
    steps.push_back(std::make_unique<DropFirst>(1));
    stream_ = sequence(std::move(steps));
    // The conv's halo in upsampled rows, one row later: output row r' of the dropped sequence is
    // the conv's row r' + 1.
    const Halo h = halo_of(conv_node(conv)->reach());
    halo_ = {h.left - 1, h.right + 1};
  }
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t) override {
    ProfileScope prof("upsample2x_causal_conv");
    Tensor u = ops::upsample_nearest2x_hw(x);
    return conv_.forward_padded(ts.halo(u, halo_.left, halo_.right, PadMode::zeros, conv_.name()));
  }
  int64_t out_rows(int64_t n) const override { return stream_->out_rows(n); }
  Reach reach() const override { return stream_->reach(); }
  // The halo is taken from a shard of 2S upsampled rows.
  int64_t min_shard_rows() const override {
    return Rows(std::max<int64_t>({1, halo_.left, halo_.right}), 2).ceil();
  }
  Tensor push(const Tensor& in) override { return stream_->push(in); }
  Tensor flush() override { return stream_->flush(); }
  void reset() override { stream_->reset(); }
  int64_t final_rows(int64_t n) const override { return stream_->final_rows(n); }
  int64_t held_rows() const override { return stream_->held_rows(); }
  NodePtr fork() const override { return std::make_unique<Upsample2xCausalConvNode>(conv_); }
  void save_state(StreamState& s) const override { stream_->save_state(s); }
  void load_state(StateReader& r) override { stream_->load_state(r); }

 private:
  Conv2d conv_;
  NodePtr stream_;
  Halo halo_;
};

}  // namespace

NodePtr map_rows(std::string name, int64_t rate, std::function<Tensor(const Tensor&)> fn) {
  return std::make_unique<MapRows>(std::move(name), rate, std::move(fn));
}

NodePtr upsample2x_causal_conv_node(const Conv2d& conv) {
  return std::make_unique<Upsample2xCausalConvNode>(conv);
}

NodePtr sequence(std::vector<NodePtr> ops) { return std::make_unique<Sequence>(std::move(ops)); }

NodePtr fork_join(std::string name, std::vector<NodePtr> branches,
                  std::function<Tensor(std::vector<Tensor>&)> combine) {
  return std::make_unique<ForkJoin>(std::move(name), std::move(branches), std::move(combine));
}

NodePtr mean_join(std::string name, std::vector<NodePtr> branches) {
  return std::make_unique<MeanJoin>(std::move(name), std::move(branches));
}

NodePtr identity() {
  return map_rows("identity", 1, [](const Tensor& x) { return x; });
}

NodePtr pipeline_layout(NodePtr graph) {
  if (auto* seq = dynamic_cast<Sequence*>(graph.get())) {
    std::vector<NodePtr> parts;
    for (NodePtr& n : seq->release()) parts.push_back(pipeline_layout(std::move(n)));
    return sequence(std::move(parts));
  }
  auto* join = dynamic_cast<ForkJoin*>(graph.get());
  if (!join) return graph;
  std::vector<NodePtr> branches;
  for (NodePtr& b : join->branches()) branches.push_back(pipeline_layout(std::move(b)));
  if (!dynamic_cast<MeanJoin*>(join)) return join->remake(std::move(branches));
  // [x] → [x | 0]; branch j: [x | acc] → [x | acc + b_j(x)], the last one → (acc + b_j(x)) / n.
  const int n = static_cast<int>(branches.size());
  std::vector<NodePtr> steps;
  steps.push_back(map_rows(join->name() + "_carry", 1, [](const Tensor& x) {
    return concat({x, Tensor(x.shape())}, x.rank() - 1);
  }));
  for (int j = 0; j < n; ++j) {
    const bool last = j == n - 1;
    std::vector<NodePtr> paths;
    paths.push_back(identity());
    std::vector<NodePtr> branch;
    branch.push_back(map_rows(join->name() + "_input", 1, [](const Tensor& xa) {
      const int d = xa.rank() - 1;
      return xa.narrow(d, 0, xa.dim(d) / 2);
    }));
    branch.push_back(std::move(branches[j]));
    paths.push_back(sequence(std::move(branch)));
    steps.push_back(fork_join(join->name(), std::move(paths), [last, n](std::vector<Tensor>& p) {
      const int d = p[0].rank() - 1;
      const int64_t C = p[0].dim(d) / 2;
      Tensor acc = p[0].narrow(d, C, C);  // a copy
      ops::add_(acc, p[1]);
      if (!last) return concat({p[0].narrow(d, 0, C), acc}, d);
      divide_(acc, n);
      return acc;
    }));
  }
  return sequence(std::move(steps));
}

std::vector<NodePtr> top_level_nodes(NodePtr graph) {
  std::vector<NodePtr> out;
  if (auto* seq = dynamic_cast<Sequence*>(graph.get())) {
    for (NodePtr& op : seq->release())
      for (NodePtr& leaf : top_level_nodes(std::move(op))) out.push_back(std::move(leaf));
  } else {
    out.push_back(std::move(graph));
  }
  return out;
}

Tensor run_stream(Node& node, const Tensor& in, int64_t chunk) {
  MESHNN_CHECK(chunk >= 1, "run_stream: chunk must be ≥ 1");
  Tensor out;
  for (int64_t r = 0; r < in.dim(1); r += chunk)
    out = cat_rows(out, node.push(in.narrow(1, r, std::min(chunk, in.dim(1) - r))));
  return cat_rows(out, node.flush());
}

}  // namespace meshnn::graph
