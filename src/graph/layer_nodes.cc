// The graph's layer nodes: convolutions (1-D and 2-D, time-strided), transposed convolutions, the
// anti-aliased activation and the polyphase upsampler. Each keeps its one-shot run, its exact
// stream and its reach together.
#include <algorithm>
#include <limits>
#include <numeric>
#include <type_traits>

#include "graph/graph.h"
#include "graph/node_rows.h"
#include "meshnn/core/profile.h"
#include "ops/elementwise.h"

namespace meshnn::graph {
namespace {

// ---- convolutions
// --------------------------------------------------------------------------------

// Buffer rows are rows of the padded input (input row i is padded row i + pad_left).
template <class Layer>
class ConvNode final : public Node {
 public:
  ConvNode(const Layer& conv, int64_t kernel_eff, int64_t stride, int64_t pad_left,
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
  NodePtr fork() const override { return std::make_unique<ConvNode>(conv_, k_, s_, pl_, pr_); }
  // Row numbers from next_·s (whole strides): outputs() of the shifted end is the shifted count
  // once the window is full, and 0 ≤ next_ before, as unshifted.
  void save_state(StreamState& s) const override { buf_.save(s, next_ * s_); }
  void load_state(StateReader& r) override {
    buf_.load(r, 0);
    next_ = 0;
  }
  int64_t held_rows() const override { return buf_.rows(); }
  // One device: the node's pads at the sequence ends (the layer's own, or explicit ones for a
  // 'valid' conv such as the causal STFT). A time shard: the graph's halo from its neighbours.
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    const Halo h = ts.sharded() ? halo_of(reach()) : Halo{pl_, pr_};
    LayerProfileScope prof(conv_.name(), direct_flops(x, ts));
    if constexpr (std::is_same_v<Layer, Conv1d>)
      return conv1d_sharded(conv_, x, ts, real, h.left, h.right);
    else
      return conv2d_sharded(conv_, x, ts, real, h.left, h.right);
  }
  int64_t out_rows(int64_t n) const override { return outputs(pl_ + n + pr_); }
  // Output row o reads input rows [o·s − pl, o·s − pl + K).
  Reach reach() const override { return {Rows(pl_), Rows(k_ - 1 - pl_), Rows(1, s_)}; }

 private:
  int64_t outputs(int64_t padded_rows) const {
    return padded_rows >= k_ ? (padded_rows - k_) / s_ + 1 : 0;
  }
  // The direct algorithm's FLOPs for this device's rows of x (B, n, …, C_in), for the layer profile
  // (0 when the profile is off): 2 · outputs · C_in · taps.
  double direct_flops(const Tensor& x, const TimeShard& ts) const {
    if (!profiling_layers()) return 0;
    const auto& c = conv_.config();
    double taps = 1, cols = 1;
    if constexpr (std::is_same_v<Layer, Conv1d>) {
      taps = static_cast<double>(c.kernel_size);
    } else {
      taps = static_cast<double>(c.kernel_size[0] * c.kernel_size[1]);
      cols = static_cast<double>(x.dim(2)) / static_cast<double>(c.stride[1]);
    }
    const double rows =
        static_cast<double>(ts.sharded() ? x.dim(1) : outputs(pl_ + x.dim(1) + pr_));
    return 2.0 * static_cast<double>(x.dim(0)) * rows / (ts.sharded() ? s_ : 1) * cols *
           static_cast<double>(c.in_channels * c.out_channels) * taps;
  }
  // The direct FLOPs of `rows` output rows from `window` (B, n, …, C_in), for the layer profile.
  double stream_flops(const Tensor& window, int64_t rows) const {
    if (!profiling_layers()) return 0;
    const auto& c = conv_.config();
    double per_row = 2.0 * static_cast<double>(window.dim(0) * c.in_channels * c.out_channels);
    if constexpr (std::is_same_v<Layer, Conv1d>)
      per_row *= static_cast<double>(c.kernel_size);
    else
      per_row *= static_cast<double>(c.kernel_size[0] * c.kernel_size[1] * window.dim(2)) /
                 static_cast<double>(c.stride[1]);
    return per_row * static_cast<double>(rows);
  }
  // The outputs whose window [o·s, o·s + K) is in the buffer.
  Tensor produce() {
    const int64_t end = outputs(buf_.end());
    if (end <= next_) {
      Shape one = buf_.empty_rows().shape();
      one[1] = k_;
      return no_rows(conv_.output_shape(one, true));
    }
    const Tensor window = buf_.rows_between(next_ * s_, (end - 1) * s_ + k_);
    LayerProfileScope prof(conv_.name(), stream_flops(window, end - next_));
    Tensor y = conv_.forward_padded(window);
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
class ConvTransposeNode final : public Node {
 public:
  explicit ConvTransposeNode(const ConvTranspose1d& conv)
      : conv_(conv),
        k_((conv.config().kernel_size - 1) * conv.config().dilation + 1),
        s_(conv.config().stride),
        crop_l_(conv.pad_left()),
        crop_r_(conv.pad_right()),
        skip_(crop_l_) {
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
    skip_ = crop_l_;
  }
  int64_t final_rows(int64_t n) const override { return std::max<int64_t>(0, s_ * n - crop_l_); }
  NodePtr fork() const override { return std::make_unique<ConvTransposeNode>(conv_); }
  // Input rows from the buffer's begin (output rows s× that): every input a future row reads is
  // at or after it, so the clamp at input 0 never bites; the crop becomes a relative skip.
  void save_state(StreamState& s) const override {
    const int64_t j = buf_.begin();
    buf_.save(s, j);
    s.counters.push_back(next_ - s_ * j);
    s.counters.push_back(std::max(skip_, next_) - s_ * j);
  }
  void load_state(StateReader& r) override {
    buf_.load(r, 0);
    next_ = r.counter();
    skip_ = r.counter();
  }
  int64_t held_rows() const override { return buf_.rows(); }
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    const Halo h = halo_of(reach());
    return conv_transpose1d_sharded(conv_, x, ts, real, h.left, h.right);
  }
  int64_t out_rows(int64_t n) const override {
    return n > 0 ? (n - 1) * s_ + k_ - crop_l_ - crop_r_ : 0;
  }
  // Cropped row o is full row o + crop_l, which reads inputs ⌈(o + crop_l − K + 1)/s⌉ … ⌊(o +
  // crop_l)/s⌋; its own input is o/s.
  Reach reach() const override { return {Rows(k_ - 1 - crop_l_, s_), Rows(crop_l_, s_), Rows(s_)}; }

 private:
  // First input that row m reads.
  int64_t first_input(int64_t m) const { return std::max<int64_t>(0, ceil_div(m - k_ + 1, s_)); }
  // Full rows [next_, target), cropped.
  Tensor produce(int64_t target) {
    const int64_t from = std::max(next_, skip_);
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
  int64_t skip_;      // full rows before it are cropped (crop_l_ at the stream's start)
};

// ---- resamplers
// ----------------------------------------------------------------------------------

// Output row t reads input rows within ±ctx of t; the sequence ends are replicate edges the
// kernel applies itself when told where the real sequence ends (unknown, so "far away", until
// flush).
class ActivationNode final : public Node {
 public:
  explicit ActivationNode(const layers::AntiAliasedActivation& act) : act_(act) {}

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
  NodePtr fork() const override { return std::make_unique<ActivationNode>(act_); }
  // Once the sequence start is out of reach (next_ ≥ kCtx) only rows relative to next_ matter.
  void save_state(StreamState& s) const override {
    const int64_t j = next_ >= kCtx ? next_ - kCtx : 0;
    buf_.save(s, j);
    s.counters.push_back(next_ - j);
  }
  void load_state(StateReader& r) override {
    buf_.load(r, 0);
    next_ = r.counter();
  }
  int64_t held_rows() const override { return buf_.rows(); }
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    return activation_sharded(act_, x, ts, real);
  }
  int64_t out_rows(int64_t n) const override { return n; }
  Reach reach() const override { return {Rows(kCtx), Rows(kCtx), Rows(1)}; }

 private:
  static constexpr int64_t kCtx = layers::AntiAliasedActivation::context_rows();
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max() / 4;

  // Rows [next_, target) of a sequence of `length` rows.
  Tensor produce(int64_t target, int64_t length) {
    if (target <= next_) return buf_.empty_rows();
    const int64_t lo = std::max<int64_t>(0, next_ - kCtx);
    const int64_t hi = std::min(buf_.end(), target + kCtx);
    ProfileScope prof("anti_aliased_activation");  // same bucket as the one-shot run
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
class UpsampleNode final : public Node {
 public:
  UpsampleNode(std::vector<float> taps, const ops::UpsampleGeometry& g)
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
  NodePtr fork() const override { return std::make_unique<UpsampleNode>(taps_, g_); }
  // Once the replicated start edge is out of the window (next_ ≥ pad) only relative rows matter.
  void save_state(StreamState& s) const override {
    const int64_t j = next_ >= g_.pad ? next_ - g_.pad : 0;
    buf_.save(s, j);
    s.counters.push_back(next_ - j);
  }
  void load_state(StateReader& r) override {
    buf_.load(r, 0);
    next_ = r.counter();
  }
  int64_t held_rows() const override { return buf_.rows(); }
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    return upsample1d_sharded(x, taps_, g_, ts, real);
  }
  int64_t out_rows(int64_t n) const override { return g_.ratio * n; }
  Reach reach() const override { return {Rows(g_.pad), Rows(g_.pad), Rows(g_.ratio)}; }

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

// Zero rows appended at the end of the stream up to a whole number of `hop` rows (encode's right
// pad; never a crop).
class PadToMultiple final : public Node {
 public:
  explicit PadToMultiple(int64_t hop) : hop_(hop) {}
  // One shot: x (B, L, …) → (B, out_rows(L), …), the zero rows appended. Time-sharded, x is this
  // device's shard of the padded sequence already (the caller cuts whole hops and zero-fills past
  // L), so it passes unchanged: the pad rows are real rows of the output, and zeros.
  Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) override {
    if (ts.sharded() || x.dim(1) != real) {
      MESHNN_CHECK(x.dim(1) % hop_ == 0, "internal: encode shard of ", x.dim(1),
                   " samples is not whole hops");
      return x;
    }
    const int64_t pad = out_rows(real) - real;
    if (pad == 0) return x;
    Shape s = x.shape();
    s[1] = pad;
    return concat({x, Tensor(s)}, 1);
  }
  int64_t out_rows(int64_t n) const override { return (n + hop_ - 1) / hop_ * hop_; }
  Reach reach() const override { return {Rows(0), Rows(0), Rows(1)}; }
  Tensor push(const Tensor& in) override {
    if (!in.defined()) return Tensor();
    if (!like_.defined()) {
      Shape s = in.shape();
      s[1] = 0;
      like_ = Tensor::empty(s);
    }
    rows_ += in.dim(1);
    return in;
  }
  Tensor flush() override {
    Tensor out;
    if (like_.defined()) {
      Shape s = like_.shape();
      s[1] = (hop_ - rows_ % hop_) % hop_;
      out = Tensor(s);  // zeros
    }
    reset();
    return out;
  }
  void reset() override {
    rows_ = 0;
    like_ = Tensor();
  }
  int64_t final_rows(int64_t n) const override { return n; }
  NodePtr fork() const override { return std::make_unique<PadToMultiple>(hop_); }
  void save_state(StreamState& s) const override {
    s.tensors.push_back(like_);
    s.counters.push_back(rows_ % hop_);
  }
  void load_state(StateReader& r) override {
    like_ = r.tensor();
    rows_ = r.counter();
  }
  int64_t held_rows() const override { return 0; }

 private:
  int64_t hop_;
  int64_t rows_ = 0;
  Tensor like_;
};

}  // namespace

NodePtr conv_node(const Conv1d& conv, int64_t pad_left, int64_t pad_right) {
  const Conv1dConfig& c = conv.config();
  return std::make_unique<ConvNode<Conv1d>>(conv, (c.kernel_size - 1) * c.dilation + 1, c.stride,
                                            pad_left, pad_right);
}

NodePtr conv_node(const Conv1d& conv) { return conv_node(conv, conv.pad_left(), conv.pad_right()); }

NodePtr conv_node(const Conv2d& conv) {
  const Conv2dConfig& c = conv.config();
  MESHNN_CHECK(c.stride[0] == 1, conv.name(), ": streaming needs time stride 1");
  return std::make_unique<ConvNode<Conv2d>>(conv, (c.kernel_size[0] - 1) * c.dilation[0] + 1, 1,
                                            conv.pad_left(), conv.pad_right());
}

NodePtr conv_transpose_node(const ConvTranspose1d& conv) {
  return std::make_unique<ConvTransposeNode>(conv);
}

NodePtr activation_node(const layers::AntiAliasedActivation& act) {
  return std::make_unique<ActivationNode>(act);
}

NodePtr upsample_node(std::vector<float> taps, const ops::UpsampleGeometry& g) {
  return std::make_unique<UpsampleNode>(std::move(taps), g);
}

NodePtr pad_to_multiple(int64_t hop) { return std::make_unique<PadToMultiple>(hop); }

}  // namespace meshnn::graph
