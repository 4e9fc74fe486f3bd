// One graph per model: the model's wiring written once, as nodes over a sequence of rows, and run
// many ways.
//
// Every node sees its input as one sequence of rows (dim 1 of (B, rows, …) f32 tensors) and has
// two ways to run, over the same layer objects and the same arithmetic:
// - run(): the whole sequence at once, or this device's time shard of it (one shot, time-sharded;
//   context from the layer's implicit padding on one device, from the neighbour exchange on a
//   mesh: layers/time_shard.h);
// - push() / flush(): the sequence arriving a few rows at a time (streaming). push() takes the
//   next rows and returns the output rows that just became final: rows whose whole receptive field
//   is known. flush() says the input has ended (the right-hand padding of the one-shot run is now
//   known) and returns the rest. Each node keeps exactly the history its receptive field needs (a
//   conv its last (k − 1)·d input rows, a transposed conv ⌊(k − 1)/s⌋, the anti-aliased activation
//   2 × 5 rows), so the work per pushed row is constant however long the stream runs.
//
// The streamed output, concatenated over the pushes and the flush, equals run() on the whole
// sequence: each output row is computed from the same input values with the same padding. It is
// bit-identical where the kernel's arithmetic for a row does not depend on where the row sits in
// the call (docs/streaming.md lists which layers that holds for).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"
#include "meshnn/layers/activation.h"
#include "meshnn/layers/conv.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/ops/resample.h"

namespace meshnn::graph {

// An exact fraction of rows (a transposed conv reads a fraction of an input row per output row).
struct Rows {
  int64_t num = 0, den = 1;
  Rows() = default;
  Rows(int64_t n, int64_t d = 1);  // normalised, den > 0
  int64_t ceil() const;
  int64_t floor() const;
  Rows operator+(const Rows& o) const;
  Rows operator*(const Rows& o) const;
  bool operator<(const Rows& o) const { return num * o.den < o.num * den; }
  bool operator==(const Rows& o) const { return num == o.num && den == o.den; }
};

// A node's reach: the input rows an output row reads beyond its own position (the input row it
// is aligned with), on each side, and the rate (output rows per input row). Everything that
// depends on context — the receptive field, the streaming look-ahead and history, time-shard
// halos, chunk windows — follows from it. Composed exactly: a sequence adds its parts' reaches
// (each converted into the first part's input rows), a fork_join takes the widest branch.
struct Reach {
  Rows left, right;
  Rows rate{1};
};
// The left reach of a node that reads its whole past (a causal attention's K/V cache).
constexpr int64_t kWholePast = int64_t{1} << 40;

// The rows a device's time shard of a node's input takes from its time neighbours in the one-shot
// run (TimeShard::halo): `left` from the previous device, `right` from the next.
struct Halo {
  int64_t left = 0, right = 0;
};
// A layer's halo, from its reach: the one rule every sharded layer asks. The shard of input rows
// [a, a + S) makes output rows [rate·a, rate·(a + S)); the first reads from input a − left (⌈left⌉
// whole rows before the shard), the last, aligned with input a + S − 1/rate, up to a + S − 1/rate
// + right (⌊right + 1 − 1/rate⌋ rows past it). Never negative.
Halo halo_of(const Reach& r);

class Node;
using NodePtr = std::unique_ptr<Node>;

// A stream's history in a graph (every node's held rows and counters, in graph order), taken out
// so that the histories of several streams can be stacked along B and pushed as one batch
// (streaming/stream_batcher.h). The counters are normalised: row numbers are relative to the
// node's next output (shifted by whole strides), so two streams in the same phase of a long
// sequence have equal counters whatever their absolute row. Two states whose counters are equal
// and whose tensors agree in everything but dim 0 (definedness included) make the graph behave
// identically, so they can be stacked.
struct StreamState {
  std::vector<Tensor> tensors;    // (B, …) each; undefined where a node has no rows yet
  std::vector<int64_t> counters;  // normalised
};

// Reads a StreamState back in the order Node::save_state wrote it.
class StateReader {
 public:
  explicit StateReader(const StreamState& s) : s_(s) {}
  Tensor tensor();
  int64_t counter();
  // Every entry was read (the state was saved from the same graph).
  void finish() const;

 private:
  const StreamState& s_;
  size_t t_ = 0, c_ = 0;
};

class Node {
 public:
  virtual ~Node();

  // ---- the whole sequence (one shot, time-sharded)
  // x: this device's (B, S, …) shard of a sequence of `real` rows (S = real on one device with a
  // default TimeShard) → its (B, S_out, …) shard of the output sequence of out_rows(real) rows.
  virtual Tensor run(const Tensor& x, const TimeShard& ts, int64_t real) = 0;
  // Output rows of the one-shot run over n input rows.
  virtual int64_t out_rows(int64_t n) const = 0;
  // Context and rate (see Reach).
  virtual Reach reach() const = 0;
  // The fewest of this node's input rows a device's time shard may hold in the one-shot run: every
  // halo exchanged inside fits in one neighbour's shard (TimeShard::halo's limit). A layer: the
  // wider side of halo_of(reach()); a structure: its parts', each at its own input rate. The
  // smallest shard a time split may give a device follows from it, for every model.
  virtual int64_t min_shard_rows() const;

  // ---- streaming
  // in: (B, n, …) the next n ≥ 0 rows of this node's input → (B, m, …) the m ≥ 0 output rows
  // that became final, in order.
  virtual Tensor push(const Tensor& in) = 0;
  // End of input → the remaining output rows. The node is then reset for a new stream.
  virtual Tensor flush() = 0;
  // Forget the stream (history, counters); weights and plans are kept.
  virtual void reset() = 0;
  // Output rows final after n input rows, before flush (the latency model).
  virtual int64_t final_rows(int64_t n) const = 0;
  // Rows of input held back as history right now (for memory checks).
  virtual int64_t held_rows() const = 0;

  // A fresh node over the same weights (its own plans and history), for another thread.
  virtual NodePtr fork() const = 0;

  // The stream history (see StreamState): appended to `s`; load_state replaces this node's
  // history with the one `r` reads (saved by this node or a fork of it, of any batch B).
  virtual void save_state(StreamState& s) const = 0;
  virtual void load_state(StateReader& r) = 0;

  // One shot on one device. x: (B, T, …) → (B, out_rows(T), …).
  Tensor run(const Tensor& x) { return run(x, TimeShard(), x.dim(1)); }
};

// Rows [begin, begin + rows) of a stream, (B, rows, …).
class RowBuffer {
 public:
  int64_t begin() const { return begin_; }
  int64_t end() const { return begin_ + rows(); }
  int64_t rows() const { return data_.defined() ? data_.dim(1) : 0; }
  bool has_shape() const { return data_.defined(); }
  // x: (B, n, …) appended at end(). The first append fixes B and the trailing dims.
  void append(const Tensor& x);
  // n zero rows appended (needs a shape: after an append, or set_shape).
  void append_zeros(int64_t n);
  void set_shape(const Tensor& like);
  // Copy of stream rows [from, to) ⊆ [begin, end).
  Tensor rows_between(int64_t from, int64_t to) const;
  // Rows before `row` are forgotten.
  void drop_before(int64_t row);
  // (B, 0, …) in this buffer's shape.
  Tensor empty_rows() const;
  void clear();
  // The rows (a tensor; undefined before the shape is known) and begin() − origin (a counter);
  // load puts them back with begin() = counter + origin.
  void save(StreamState& s, int64_t origin) const;
  void load(StateReader& r, int64_t origin);

 private:
  Tensor data_;
  int64_t begin_ = 0;
};

// ---- layer nodes --------------------------------------------------------------------------------

// Conv1d / Conv2d along time (dim 1) with the layer's own time padding (zeros or causal) and
// stride: output row o reads padded input rows [o·s, o·s + K). x: (B, n, C) or (B, n, W, C).
NodePtr conv_node(const Conv1d& conv);
// The same with explicit time pads for a layer built without them (a 'valid' conv whose
// caller pads: the BWE's causal STFT).
NodePtr conv_node(const Conv1d& conv, int64_t pad_left, int64_t pad_right);
NodePtr conv_node(const Conv2d& conv);
// ConvTranspose1d (output_padding 0): x (B, n, C_in) → (B, s·n − …, C_out), as the one-shot crop.
NodePtr conv_transpose_node(const ConvTranspose1d& conv);
// BigVGAN Activation1d (replicate edges at the sequence ends). x: (B, n, C) → (B, n, C).
NodePtr activation_node(const layers::AntiAliasedActivation& act);
// Replicate-padded ×ratio FIR upsampler (ops::upsample1d). x: (B, n, C) → (B, ratio·n, C).
NodePtr upsample_node(std::vector<float> taps, const ops::UpsampleGeometry& g);
// Nearest ×2 along time and width, then a causal k3 Conv2d, then the first time row dropped (the
// LTX mel-VAE upsampler). x: (B, n, W, C) → (B, 2n − 1, 2W, C_out).
NodePtr upsample2x_causal_conv_node(const Conv2d& conv);

// ---- structure ----------------------------------------------------------------------------------

// Rows mapped independently: fn((B, n, …)) → (B, rate·n, …); fn must not write into its input.
// `name` for messages and the profile.
NodePtr map_rows(std::string name, int64_t rate, std::function<Tensor(const Tensor&)> fn);
// Nodes applied one after another.
NodePtr sequence(std::vector<NodePtr> nodes);
// Every branch sees the same input; once all branches have row r, combine(row r of each) is
// output. Branches must produce the same number of rows in total. combine((B, n, …) each) → (B,
// n, …); it may write into the branch outputs (never into an identity branch's rows).
NodePtr fork_join(std::string name, std::vector<NodePtr> branches,
                  std::function<Tensor(std::vector<Tensor>&)> combine);
// The mean of the branches' outputs, ((b0 + b1) + …) / n (a generator stage's residual blocks):
// a fork_join the pipeline pass below can serialise. Branches (B, n, …) → (B, n, …).
NodePtr mean_join(std::string name, std::vector<NodePtr> branches);
// The identity (a fork_join branch for a residual's skip path).
NodePtr identity();
// Zero rows appended at the end up to a whole number of `hop` rows (an encoder's right pad, never
// a crop): (B, L, …) → (B, hop·⌈L/hop⌉, …). A time shard must be whole hops already (the caller
// pads), and passes unchanged.
NodePtr pad_to_multiple(int64_t hop);

// The graph as a pipeline lays it out: every mean_join becomes its branches one after another,
// the running sum carried beside the input in the last dim ([x | acc]; acc = ((0 + b0) + b1) + …,
// then / n: the same arithmetic, so the output is unchanged), so that a pipeline can cut between
// the branches. The look-ahead becomes the sum of the branches' instead of the widest's. The
// nodes are moved into the new graph.
NodePtr pipeline_layout(NodePtr graph);

// The top-level nodes of a graph: a sequence's members (nested sequences flattened); any other
// node alone. Running them one after another is the graph.
std::vector<NodePtr> top_level_nodes(NodePtr graph);

// Output rows of `node` when `n` input rows arrive one push at a time in pushes of `chunk` rows
// and then flush: convenience for tests and look-ahead reports. in: (B, n, …).
Tensor run_stream(Node& node, const Tensor& in, int64_t chunk);

}  // namespace meshnn::graph
