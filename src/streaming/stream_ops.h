// Exact streaming: a model as a graph of stateful operators over a stream of rows.
//
// Every operator sees its input as one sequence of rows (dim 1 of (B, rows, …) f32 tensors) that
// arrives a few rows at a time. push() takes the next rows and returns the output rows that just
// became final: rows whose whole receptive field is known. flush() says the input has ended (the
// right-hand padding of the one-shot forward is now known) and returns the rest. Each operator
// keeps exactly the history its receptive field needs (a conv its last (k − 1)·d input rows, a
// transposed conv ⌊(k − 1)/s⌋, the anti-aliased activation 2 × 5 rows), so the work per pushed
// row is constant however long the stream runs.
//
// The output, concatenated over the pushes and the flush, equals the one-shot forward on the whole
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
#include "meshnn/ops/resample.h"

namespace meshnn::streaming {

// How a model lays out its stream graph.
enum class StreamLayout {
  // A generator stage's residual blocks as parallel branches joined by their mean: the stage's
  // look-ahead is its widest block's (the lowest latency).
  lowest_latency,
  // The blocks one after another, the running sum carried beside the stage input, so that a
  // pipeline can cut between blocks; the stage's look-ahead is the sum of its blocks'.
  pipeline_cuts,
};

class StreamOp {
 public:
  virtual ~StreamOp();
  // in: (B, n, …) the next n ≥ 0 rows of this operator's input → (B, m, …) the m ≥ 0 output rows
  // that became final, in order.
  virtual Tensor push(const Tensor& in) = 0;
  // End of input → the remaining output rows. The operator is then reset for a new stream.
  virtual Tensor flush() = 0;
  // Forget the stream (history, counters); weights and plans are kept.
  virtual void reset() = 0;
  // Output rows final after n input rows, before flush (the latency model).
  virtual int64_t final_rows(int64_t n) const = 0;
  // A fresh operator over the same weights (its own plans and history), for another thread.
  virtual std::unique_ptr<StreamOp> fork() const = 0;
  // Rows of input held back as history right now (for memory checks).
  virtual int64_t held_rows() const = 0;
};

using StreamOpPtr = std::unique_ptr<StreamOp>;

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

 private:
  Tensor data_;
  int64_t begin_ = 0;
};

// ---- operators
// -----------------------------------------------------------------------------------

// Conv1d / Conv2d along time (dim 1) with the layer's own time padding (zeros or causal) and
// stride: output row o reads padded input rows [o·s, o·s + K). x: (B, n, C) or (B, n, W, C).
StreamOpPtr conv_stream(const Conv1d& conv);
// The same with explicit time pads for a layer built without them (a 'valid' conv whose
// one-shot caller pads: the BWE's causal STFT).
StreamOpPtr conv_stream(const Conv1d& conv, int64_t pad_left, int64_t pad_right);
StreamOpPtr conv_stream(const Conv2d& conv);
// ConvTranspose1d (output_padding 0): x (B, n, C_in) → (B, s·n − …, C_out), as the one-shot crop.
StreamOpPtr conv_transpose_stream(const ConvTranspose1d& conv);
// BigVGAN Activation1d (replicate edges at the sequence ends). x: (B, n, C) → (B, n, C).
StreamOpPtr activation_stream(const layers::AntiAliasedActivation& act);
// Replicate-padded ×ratio FIR upsampler (ops::upsample1d). x: (B, n, C) → (B, ratio·n, C).
StreamOpPtr upsample_stream(std::vector<float> taps, const ops::UpsampleGeometry& g);
// Rows mapped independently: fn((B, n, …)) → (B, rate·n, …). `name` for messages.
StreamOpPtr map_rows(std::string name, int64_t rate, std::function<Tensor(const Tensor&)> fn);
// The stream without its first `n` rows.
StreamOpPtr drop_first(int64_t n);
// Operators applied one after another.
StreamOpPtr sequence(std::vector<StreamOpPtr> ops);
// Every branch sees the same input; once all branches have row r, combine(row r of each) is
// output. Branches must produce the same number of rows in total. combine((B, n, …) each) → (B,
// n, …).
StreamOpPtr fork_join(std::string name, std::vector<StreamOpPtr> branches,
                      std::function<Tensor(std::vector<Tensor>&)> combine);
// The identity (a fork_join branch for a residual's skip path).
StreamOpPtr identity();

// The top-level operators of a graph: a sequence's members (nested sequences flattened); any
// other operator alone. Running them one after another is the graph.
std::vector<StreamOpPtr> top_level_ops(StreamOpPtr graph);

// Output rows of `op` when `n` input rows arrive one push at a time in pushes of `chunk` rows
// and then flush: convenience for tests and look-ahead reports. in: (B, n, …).
Tensor run_stream(StreamOp& op, const Tensor& in, int64_t chunk);

}  // namespace meshnn::streaming
