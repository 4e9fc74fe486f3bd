#include "layers/mlp.h"

#include <cstring>

#include "meshnn/core/error.h"

namespace meshnn::layers {

FeedForward::FeedForward(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                         Precision precision)
    : ff1_(Linear::from_out_in(w1, b1, Activation::gelu_tanh, precision)),
      ff2_(Linear::from_out_in(w2, b2, Activation::none, precision)) {
  MESHNN_CHECK_AS(
      ShapeError,
      ff2_.in_features() == ff1_.out_features() && ff2_.out_features() == ff1_.in_features(),
      "FeedForward: ff.net.0.proj is ", ff1_.out_features(), "x", ff1_.in_features(),
      " but ff.net.2 is ", ff2_.out_features(), "x", ff2_.in_features());
}

void FeedForward::forward_rows(const float* x, int64_t M, int64_t ldx, float* dst, int64_t ldd,
                               bool accumulate, float* hidden) {
  ff1_.forward_rows(x, M, ldx, hidden, ff1_.out_features(), false);
  ff2_.forward_rows(hidden, M, ff1_.out_features(), dst, ldd, accumulate);
}

CategorySpecificMlp::CategorySpecificMlp(const Tensor& w1, const Tensor& b1, const Tensor& w2,
                                         const Tensor& b2, int64_t in_pad, Precision precision)
    : precision_(precision) {
  MESHNN_CHECK_AS(ShapeError, w1.rank() == 3 && w2.rank() == 3 && b1.rank() == 2 && b2.rank() == 2,
                  "CategorySpecificMlp: expected W [E, in, out] and b [E, out]");
  w1_ = w1.to(DType::f32);
  b1_ = b1.to(DType::f32);
  w2_ = w2.to(DType::f32);
  b2_ = b2.to(DType::f32);
  out_ = w2.dim(2);
  in_pad_ = in_pad;
  MESHNN_CHECK_AS(ShapeError, in_pad >= w1.dim(1), "CategorySpecificMlp: in_pad ", in_pad, " < in ",
                  w1.dim(1));
  layer1_.resize(static_cast<size_t>(w1.dim(0)));
  layer2_.resize(static_cast<size_t>(w1.dim(0)));
}

Tensor CategorySpecificMlp::forward(const Tensor& x, int e) {
  MESHNN_CHECK(e >= 0 && e < num_categories(), "embodiment id ", e, " is out of range [0, ",
               num_categories(), ")");
  if (!layer1_[e].defined()) {
    const int64_t in = w1_.dim(1), hid = w1_.dim(2);
    // Layer 1 slice zero-padded to in_pad rows (the padded state width of the plan).
    Tensor s1({in_pad_, hid});
    std::memcpy(s1.raw(), w1_.data<float>() + e * in * hid, sizeof(float) * in * hid);
    layer1_[e] =
        Linear::from_in_out(s1, b1_.narrow(0, e, 1).reshape({hid}), Activation::relu, precision_);
    layer2_[e] =
        Linear::from_in_out(w2_.narrow(0, e, 1).reshape({hid, out_}),
                            b2_.narrow(0, e, 1).reshape({out_}), Activation::none, precision_);
  }
  return layer2_[e].forward(layer1_[e].forward(x));
}

}  // namespace meshnn::layers
