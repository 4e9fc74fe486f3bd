// Feed-forward blocks.
//  * FeedForward (diffusers FeedForward with "gelu-approximate"): y = GELU_tanh(x·W1ᵀ + b1)·W2ᵀ +
//  b2,
//    keys `ff.net.0.proj.{weight,bias}` [F, D] and `ff.net.2.{weight,bias}` [D, F]. GELU is fused
//    into the first matmul, the residual add into the second.
//  * CategorySpecificMlp (GR00T's embodiment-conditioned MLP): y = relu(x·W1[e] + b1[e])·W2[e] +
//  b2[e]
//    with W [E, in, out], b [E, out]; ReLU fused into the first product.
#pragma once

#include <vector>

#include "layers/linear.h"

namespace meshnn::layers {

class FeedForward {
 public:
  FeedForward() = default;
  // w1: (F, D), b1: (F), w2: (D, F), b2: (D) — nn.Linear layouts.
  FeedForward(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
              Precision precision);
  int64_t dim() const { return ff1_.in_features(); }
  int64_t hidden() const { return ff1_.out_features(); }
  // x: (M, D) rows `ldx` apart → dst (M, D) rows `ldd` apart; accumulate: dst += FF(x)
  // (the block's residual). `hidden` is scratch of at least M·F floats.
  void forward_rows(const float* x, int64_t M, int64_t ldx, float* dst, int64_t ldd,
                    bool accumulate, float* hidden);

 private:
  Linear ff1_, ff2_;
};

class CategorySpecificMlp {
 public:
  CategorySpecificMlp() = default;
  // w1: (E, in, hidden), b1: (E, hidden), w2: (E, hidden, out), b2: (E, out). `in_pad` ≥ in: W1
  // rows in … in_pad−1 are zero (the padded state width; the zero rows add exact zeros).
  CategorySpecificMlp(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                      int64_t in_pad, Precision precision);
  int num_categories() const { return static_cast<int>(w1_.dim(0)); }
  int64_t in_features() const { return in_pad_; }
  int64_t out_features() const { return out_; }
  // x: (M, in_pad) f32 → (M, out) f32, with the weights of category e (0 ≤ e < E, checked).
  // Category e's two layers are packed on its first use (one robot rarely changes embodiment).
  Tensor forward(const Tensor& x, int e);

 private:
  Tensor w1_, b1_, w2_, b2_;  // f32 checkpoint tensors
  Precision precision_ = Precision::fp32;
  std::vector<Linear> layer1_, layer2_;
  int64_t in_pad_ = 0, out_ = 0;
};

}  // namespace meshnn::layers
