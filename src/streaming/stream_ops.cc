#include "streaming/stream_ops.h"

#include <algorithm>
#include <limits>

#include "meshnn/core/profile.h"

namespace meshnn::streaming {
namespace {

bool has_rows(const Tensor& t) { return t.defined() && t.rank() >= 2 && t.dim(1) > 0; }

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// (B, 0, …) with the trailing dims of `shape`.
Tensor no_rows(Shape shape) {
  shape[1] = 0;
  return Tensor::empty(std::move(shape));
}

}  // namespace

StreamOp::~StreamOp() = default;

// ---- RowBuffer -------------------------------------------------------------------------------

void RowBuffer::set_shape(const Tensor& like) {
  if (!data_.defined()) data_ = no_rows(like.shape());
}

void RowBuffer::append(const Tensor& x) {
  if (!x.defined()) return;
  MESHNN_CHECK_AS(ShapeError, x.rank() >= 2 && x.dtype() == DType::f32,
                  "stream: rows must be f32 (B, n, …), got ", shape_str(x.shape()));
  if (!data_.defined() || data_.dim(1) == 0) {
    if (data_.defined()) {
      Shape a = data_.shape(), b = x.shape();
      a[1] = b[1] = 0;
      MESHNN_CHECK_AS(ShapeError, a == b, "stream: rows ", shape_str(x.shape()),
                      " do not match the stream's ", shape_str(data_.shape()));
    }
    data_ = x;  // no copy: operators never write into their inputs
    return;
  }
  if (x.dim(1) == 0) return;
  data_ = concat({data_, x}, 1);
}

void RowBuffer::append_zeros(int64_t n) {
  MESHNN_CHECK(data_.defined(), "RowBuffer: zeros appended before the row shape is known");
  if (n <= 0) return;
  Shape s = data_.shape();
  s[1] = n;
  append(Tensor(s));
}

Tensor RowBuffer::rows_between(int64_t from, int64_t to) const {
  MESHNN_CHECK(from >= begin_ && to <= end() && from <= to, "RowBuffer: rows [", from, ", ", to,
               ") outside the held [", begin_, ", ", end(), ")");
  if (from == begin_ && to == end()) return data_;
  return data_.narrow(1, from - begin_, to - from);
}

void RowBuffer::drop_before(int64_t row) {
  if (!data_.defined() || row <= begin_) return;
  row = std::min(row, end());
  data_ = data_.narrow(1, row - begin_, end() - row);
  begin_ = row;
}

Tensor RowBuffer::empty_rows() const { return no_rows(data_.shape()); }

void RowBuffer::clear() {
  data_ = Tensor();
  begin_ = 0;
}

namespace {

// ---- convolutions
// --------------------------------------------------------------------------------

// Buffer rows are rows of the padded input (input row i is padded row i + pad_left).
template <class Layer>
class ConvStream final : public StreamOp {
 public:
  ConvStream(const Layer& conv, int64_t kernel_eff, int64_t stride, int64_t pad_left,
             int64_t pad_right)
      : conv_(conv), k_(kernel_eff), s_(stride), pl_(pad_left), pr_(pad_right) {}

  Tensor push(const Tensor& in) override {
    if (!in.defined()) return Tensor();
    if (!buf_.has_shape()) {
      buf_.set_shape(in);
      buf_.append_zeros(pl_);
    }
    buf_.append(in);
    return produce();
  }
  Tensor flush() override {
    Tensor out;
    if (buf_.has_shape()) {
      buf_.append_zeros(pr_);
      out = produce();
    }
    reset();
    return out;
  }
  void reset() override {
    buf_.clear();
    next_ = 0;
  }
  int64_t final_rows(int64_t n) const override { return outputs(pl_ + n); }
  StreamOpPtr fork() const override {
    return std::make_unique<ConvStream>(conv_, k_, s_, pl_, pr_);
  }
  int64_t held_rows() const override { return buf_.rows(); }

 private:
  int64_t outputs(int64_t padded_rows) const {
    return padded_rows >= k_ ? (padded_rows - k_) / s_ + 1 : 0;
  }
  // The outputs whose window [o·s, o·s + K) is in the buffer.
  Tensor produce() {
    const int64_t end = outputs(buf_.end());
    if (end <= next_) {
      Shape one = buf_.empty_rows().shape();
      one[1] = k_;
      return no_rows(conv_.output_shape(one, true));
    }
    Tensor y = conv_.forward_padded(buf_.rows_between(next_ * s_, (end - 1) * s_ + k_));
    next_ = end;
    buf_.drop_before(next_ * s_);
    return y;
  }

  Layer conv_;
  int64_t k_, s_, pl_, pr_;
  RowBuffer buf_;
  int64_t next_ = 0;  // next output row
};

// Full (uncropped) output row m of a transposed conv reads inputs i with 0 ≤ m − s·i < K, so it is
// final once input ⌊m/s⌋ has arrived. Rows are emitted in full-row numbering and the one-shot
// crops (pad_left rows at the start, pad_right at the end) applied to them.
class ConvTransposeStream final : public StreamOp {
 public:
  explicit ConvTransposeStream(const ConvTranspose1d& conv)
      : conv_(conv),
        k_((conv.config().kernel_size - 1) * conv.config().dilation + 1),
        s_(conv.config().stride),
        crop_l_(conv.pad_left()),
        crop_r_(conv.pad_right()) {
    MESHNN_CHECK(conv.config().output_padding == 0, conv.name(),
                 ": streaming needs output_padding 0");
  }

  Tensor push(const Tensor& in) override {
    if (!in.defined()) return Tensor();
    buf_.append(in);
    return produce(s_ * buf_.end());
  }
  Tensor flush() override {
    Tensor out;
    if (buf_.end() > 0) out = produce((buf_.end() - 1) * s_ + k_ - crop_r_);
    reset();
    return out;
  }
  void reset() override {
    buf_.clear();
    next_ = 0;
  }
  int64_t final_rows(int64_t n) const override { return std::max<int64_t>(0, s_ * n - crop_l_); }
  StreamOpPtr fork() const override { return std::make_unique<ConvTransposeStream>(conv_); }
  int64_t held_rows() const override { return buf_.rows(); }

 private:
  // First input that row m reads.
  int64_t first_input(int64_t m) const { return std::max<int64_t>(0, ceil_div(m - k_ + 1, s_)); }
  // Full rows [next_, target), cropped.
  Tensor produce(int64_t target) {
    const int64_t from = std::max(next_, crop_l_);
    if (target <= from) {
      next_ = std::max(next_, target);
      Shape one = buf_.empty_rows().shape();
      one[1] = 1;
      return no_rows(conv_.output_shape(one, true));
    }
    const int64_t a = first_input(from);
    Tensor full = conv_.forward_padded(buf_.rows_between(a, buf_.end()));  // row j ↔ s·a + j
    Tensor y = full.narrow(1, from - s_ * a, target - from);
    next_ = target;
    buf_.drop_before(first_input(next_));
    return y;
  }

  ConvTranspose1d conv_;
  int64_t k_, s_, crop_l_, crop_r_;
  RowBuffer buf_;     // input rows
  int64_t next_ = 0;  // next full output row
};

// ---- resamplers
// ----------------------------------------------------------------------------------

// Output row t reads input rows within ±ctx of t; the sequence ends are replicate edges the
// kernel applies itself when told where the real sequence ends (unknown, so "far away", until
// flush).
class ActivationStream final : public StreamOp {
 public:
  explicit ActivationStream(const layers::AntiAliasedActivation& act) : act_(act) {}

  Tensor push(const Tensor& in) override {
    if (!in.defined()) return Tensor();
    buf_.append(in);
    return produce(buf_.end() - kCtx, kOpenEnd);
  }
  Tensor flush() override {
    Tensor out;
    if (buf_.end() > 0) out = produce(buf_.end(), buf_.end());
    reset();
    return out;
  }
  void reset() override {
    buf_.clear();
    next_ = 0;
  }
  int64_t final_rows(int64_t n) const override { return std::max<int64_t>(0, n - kCtx); }
  StreamOpPtr fork() const override { return std::make_unique<ActivationStream>(act_); }
  int64_t held_rows() const override { return buf_.rows(); }

 private:
  static constexpr int64_t kCtx = layers::AntiAliasedActivation::context_rows();
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max() / 4;

  // Rows [next_, target) of a sequence of `length` rows.
  Tensor produce(int64_t target, int64_t length) {
    if (target <= next_) return buf_.empty_rows();
    const int64_t lo = std::max<int64_t>(0, next_ - kCtx);
    const int64_t hi = std::min(buf_.end(), target + kCtx);
    Tensor y =
        act_.forward_padded(buf_.rows_between(lo, hi), next_ - lo, hi - target, next_, length);
    next_ = target;
    buf_.drop_before(next_ - kCtx);
    return y;
  }

  layers::AntiAliasedActivation act_;
  RowBuffer buf_;
  int64_t next_ = 0;
};

// Output rows of input rows [a, b) depend on input rows [a − pad, b + pad) only, and a window
// upsampled on its own (replicate-padding its own edges) is exact away from its edges.
class UpsampleStream final : public StreamOp {
 public:
  UpsampleStream(std::vector<float> taps, const ops::UpsampleGeometry& g)
      : taps_(std::move(taps)), g_(g) {}

  Tensor push(const Tensor& in) override {
    if (!in.defined()) return Tensor();
    buf_.append(in);
    return produce(buf_.end() - g_.pad);
  }
  Tensor flush() override {
    Tensor out;
    if (buf_.end() > 0) out = produce(buf_.end());
    reset();
    return out;
  }
  void reset() override {
    buf_.clear();
    next_ = 0;
  }
  int64_t final_rows(int64_t n) const override {
    return g_.ratio * std::max<int64_t>(0, n - g_.pad);
  }
  StreamOpPtr fork() const override { return std::make_unique<UpsampleStream>(taps_, g_); }
  int64_t held_rows() const override { return buf_.rows(); }

 private:
  Tensor produce(int64_t target) {
    if (target <= next_) return buf_.empty_rows();
    const int64_t lo = std::max<int64_t>(0, next_ - g_.pad);
    Tensor up = ops::upsample1d(buf_.rows_between(lo, buf_.end()), taps_, g_);
    Tensor y = up.narrow(1, g_.ratio * (next_ - lo), g_.ratio * (target - next_));
    next_ = target;
    buf_.drop_before(next_ - g_.pad);
    return y;
  }

  std::vector<float> taps_;
  ops::UpsampleGeometry g_;
  RowBuffer buf_;
  int64_t next_ = 0;
};

// ---- structure
// -----------------------------------------------------------------------------------

class MapRows final : public StreamOp {
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
  StreamOpPtr fork() const override { return std::make_unique<MapRows>(name_, rate_, fn_); }
  int64_t held_rows() const override { return 0; }

 private:
  std::string name_;
  int64_t rate_;
  std::function<Tensor(const Tensor&)> fn_;
};

class DropFirst final : public StreamOp {
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
  StreamOpPtr fork() const override { return std::make_unique<DropFirst>(n_); }
  int64_t held_rows() const override { return 0; }

 private:
  int64_t n_, seen_ = 0;
};

Tensor cat_rows(const Tensor& a, const Tensor& b) {
  if (!has_rows(a)) return has_rows(b) || !a.defined() ? b : a;
  if (!has_rows(b)) return a;
  return concat({a, b}, 1);
}

class Sequence final : public StreamOp {
 public:
  explicit Sequence(std::vector<StreamOpPtr> ops) : ops_(std::move(ops)) {}
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
  StreamOpPtr fork() const override {
    std::vector<StreamOpPtr> f;
    for (const auto& op : ops_) f.push_back(op->fork());
    return std::make_unique<Sequence>(std::move(f));
  }
  int64_t held_rows() const override {
    int64_t h = 0;
    for (const auto& op : ops_) h += op->held_rows();
    return h;
  }
  std::vector<StreamOpPtr> release() { return std::move(ops_); }

 private:
  std::vector<StreamOpPtr> ops_;
};

class ForkJoin final : public StreamOp {
 public:
  ForkJoin(std::string name, std::vector<StreamOpPtr> branches,
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
  StreamOpPtr fork() const override {
    std::vector<StreamOpPtr> f;
    for (const auto& b : branches_) f.push_back(b->fork());
    return std::make_unique<ForkJoin>(name_, std::move(f), combine_);
  }
  int64_t held_rows() const override {
    int64_t h = 0;
    for (size_t i = 0; i < branches_.size(); ++i) h += branches_[i]->held_rows() + outs_[i].rows();
    return h;
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
  std::vector<StreamOpPtr> branches_;
  std::function<Tensor(std::vector<Tensor>&)> combine_;
  std::vector<RowBuffer> outs_;
  int64_t next_ = 0;
};

}  // namespace

StreamOpPtr conv_stream(const Conv1d& conv, int64_t pad_left, int64_t pad_right) {
  const Conv1dConfig& c = conv.config();
  return std::make_unique<ConvStream<Conv1d>>(conv, (c.kernel_size - 1) * c.dilation + 1, c.stride,
                                              pad_left, pad_right);
}

StreamOpPtr conv_stream(const Conv1d& conv) {
  return conv_stream(conv, conv.pad_left(), conv.pad_right());
}

StreamOpPtr conv_stream(const Conv2d& conv) {
  const Conv2dConfig& c = conv.config();
  MESHNN_CHECK(c.stride[0] == 1, conv.name(), ": streaming needs time stride 1");
  return std::make_unique<ConvStream<Conv2d>>(conv, (c.kernel_size[0] - 1) * c.dilation[0] + 1, 1,
                                              conv.pad_left(), conv.pad_right());
}

StreamOpPtr conv_transpose_stream(const ConvTranspose1d& conv) {
  return std::make_unique<ConvTransposeStream>(conv);
}

StreamOpPtr activation_stream(const layers::AntiAliasedActivation& act) {
  return std::make_unique<ActivationStream>(act);
}

StreamOpPtr upsample_stream(std::vector<float> taps, const ops::UpsampleGeometry& g) {
  return std::make_unique<UpsampleStream>(std::move(taps), g);
}

StreamOpPtr map_rows(std::string name, int64_t rate, std::function<Tensor(const Tensor&)> fn) {
  return std::make_unique<MapRows>(std::move(name), rate, std::move(fn));
}

StreamOpPtr drop_first(int64_t n) { return std::make_unique<DropFirst>(n); }

StreamOpPtr sequence(std::vector<StreamOpPtr> ops) {
  return std::make_unique<Sequence>(std::move(ops));
}

StreamOpPtr fork_join(std::string name, std::vector<StreamOpPtr> branches,
                      std::function<Tensor(std::vector<Tensor>&)> combine) {
  return std::make_unique<ForkJoin>(std::move(name), std::move(branches), std::move(combine));
}

StreamOpPtr identity() {
  return map_rows("identity", 1, [](const Tensor& x) { return x; });
}

std::vector<StreamOpPtr> top_level_ops(StreamOpPtr graph) {
  std::vector<StreamOpPtr> out;
  if (auto* seq = dynamic_cast<Sequence*>(graph.get())) {
    for (StreamOpPtr& op : seq->release())
      for (StreamOpPtr& leaf : top_level_ops(std::move(op))) out.push_back(std::move(leaf));
  } else {
    out.push_back(std::move(graph));
  }
  return out;
}

Tensor run_stream(StreamOp& op, const Tensor& in, int64_t chunk) {
  MESHNN_CHECK(chunk >= 1, "run_stream: chunk must be ≥ 1");
  Tensor out;
  for (int64_t r = 0; r < in.dim(1); r += chunk)
    out = cat_rows(out, op.push(in.narrow(1, r, std::min(chunk, in.dim(1) - r))));
  return cat_rows(out, op.flush());
}

}  // namespace meshnn::streaming
