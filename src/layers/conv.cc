#include "meshnn/layers/conv.h"

#include "layers/conv_engine.h"
#include "meshnn/core/error.h"
#include "ops/padding_rules.h"

// Channel alignment: the seed pads C_in / C_out to a multiple of 32 (32 × factor under channel
// TP) because its conv3d kernel tiles channels in 32s. oneDNN has no such constraint. Measured on
// the AVX2 EPYC (bench/micro/conv_bench.cc /pad16 cases, docs/benchmarks.md): padding C = 24 to 32
// made Conv1d k7 at T = 64k 1.5–1.8× SLOWER and ConvTranspose1d 48→24 no faster (48 and 96 are
// already multiples of 16), so the layers run on the real channel counts and never pad.

namespace meshnn {

using conv::ConvEngine;
using conv::ConvKind;
using conv::ConvPads;
using conv::ConvSpec;

// ---- ConvLayerBase -------------------------------------------------------------------------

ConvLayerBase::ConvLayerBase(std::string name, int spatial, int64_t c_in, int64_t c_out,
                             Precision precision)
    : name_(std::move(name)), spatial_(spatial), c_in_(c_in), c_out_(c_out), precision_(precision) {
  MESHNN_CHECK(c_in > 0 && c_out > 0, name_, ": channels must be > 0, got in ", c_in, ", out ",
               c_out);
}
ConvLayerBase::~ConvLayerBase() = default;
ConvLayerBase::ConvLayerBase(const ConvLayerBase& o)
    : name_(o.name_),
      spatial_(o.spatial_),
      c_in_(o.c_in_),
      c_out_(o.c_out_),
      precision_(o.precision_),
      pad_l_(o.pad_l_),
      pad_r_(o.pad_r_),
      engine_(o.engine_ ? o.engine_->fork() : nullptr) {}
ConvLayerBase::ConvLayerBase(ConvLayerBase&&) noexcept = default;
ConvLayerBase& ConvLayerBase::operator=(ConvLayerBase&&) noexcept = default;

void ConvLayerBase::build(bool deconv, const std::array<int64_t, 2>& kernel,
                          const std::array<int64_t, 2>& stride,
                          const std::array<int64_t, 2>& dilation, bool bias,
                          const MappedWeight& weight, const Tensor& bias_t) {
  ConvSpec spec;
  spec.kind = deconv ? ConvKind::deconv : ConvKind::conv;
  spec.spatial = spatial_;
  spec.c_in = c_in_;
  spec.c_out = c_out_;
  spec.kernel = kernel;
  spec.stride = stride;
  spec.dilation = dilation;
  spec.bias = bias;
  spec.precision = precision_;
  engine_ = std::make_unique<ConvEngine>(spec, weight, bias_t);
}

void ConvLayerBase::check_loaded() const {
  MESHNN_CHECK(engine_ != nullptr, name_, ": forward before the weights were loaded");
}

Shape ConvLayerBase::output_shape(const Shape& xs, bool padded) const {
  check_loaded();
  const int rank = spatial_ + 2;
  MESHNN_CHECK_AS(ShapeError, static_cast<int>(xs.size()) == rank, name_, ": input must be ",
                  spatial_ == 1 ? "(B, T, C)" : "(B, H, W, C)", ", got ", shape_str(xs));
  MESHNN_CHECK_AS(ShapeError, xs[rank - 1] == c_in_, name_, ": input has ", xs[rank - 1],
                  " channels, expected ", c_in_, " (shape ", shape_str(xs), ")");
  ConvPads p;
  p.l = pad_l_;
  p.r = pad_r_;
  if (padded) p.l[0] = p.r[0] = 0;
  Shape out{xs[0]};
  for (int d = 0; d < spatial_; ++d) {
    MESHNN_CHECK_AS(ShapeError, xs[1 + d] > 0, name_, ": empty input ", shape_str(xs));
    const int64_t o = engine_->out_extent(d, xs[1 + d], p);
    MESHNN_CHECK_AS(ShapeError, o > 0, name_, ": kernel (effective extent along axis ", d,
                    ") larger than the padded input ", shape_str(xs), " (pads ", p.l[d], "|",
                    p.r[d], ")");
    out.push_back(o);
  }
  out.push_back(c_out_);
  return out;
}

void ConvLayerBase::run(const Tensor& x, Tensor& y, bool padded, bool accumulate) {
  MESHNN_CHECK_AS(ShapeError, x.defined() && x.dtype() == DType::f32, name_,
                  ": input must be f32, got ", x.defined() ? dtype_name(x.dtype()) : "undefined");
  const Shape out = output_shape(x.shape(), padded);
  MESHNN_CHECK_AS(ShapeError, y.defined() && y.dtype() == DType::f32 && y.shape() == out, name_,
                  ": output must be f32 ", shape_str(out), ", got ",
                  y.defined() ? shape_str(y.shape()) : "undefined");
  ConvPads p;
  p.l = pad_l_;
  p.r = pad_r_;
  if (padded) p.l[0] = p.r[0] = 0;
  engine_->run(x, y, p, accumulate);
}

Tensor ConvLayerBase::forward(const Tensor& x) {
  check_loaded();
  Tensor y = Tensor::empty(output_shape(x.shape()), DType::f32);
  run(x, y, false, false);
  return y;
}
void ConvLayerBase::forward_into(const Tensor& x, Tensor& y, bool accumulate) {
  run(x, y, false, accumulate);
}
Tensor ConvLayerBase::forward_padded(const Tensor& x) {
  check_loaded();
  Tensor y = Tensor::empty(output_shape(x.shape(), true), DType::f32);
  run(x, y, true, false);
  return y;
}
void ConvLayerBase::forward_padded_into(const Tensor& x, Tensor& y, bool accumulate) {
  run(x, y, true, accumulate);
}

void ConvLayerBase::prepare(const Shape& xs, bool padded) { (void)impl_info(xs, padded); }

std::string ConvLayerBase::impl_info(const Shape& xs, bool padded) {
  (void)output_shape(xs, padded);
  ConvPads p;
  p.l = pad_l_;
  p.r = pad_r_;
  if (padded) p.l[0] = p.r[0] = 0;
  return engine_->impl_info(xs, p);
}

// ---- Conv1d --------------------------------------------------------------------------------

Conv1d::Conv1d(const Conv1dConfig& cfg, std::string name)
    : ConvLayerBase(std::move(name), 1, cfg.in_channels, cfg.out_channels, cfg.precision),
      cfg_(cfg) {
  MESHNN_CHECK(cfg.kernel_size > 0 && cfg.stride > 0 && cfg.dilation > 0, name_,
               ": kernel_size, stride and dilation must be > 0, got ", cfg.kernel_size, ", ",
               cfg.stride, ", ", cfg.dilation);
  try {
    auto [l, r] = ops::conv1d_pads(cfg.kernel_size, cfg.dilation, cfg.padding, cfg.padding_mode);
    pad_l_[0] = l;
    pad_r_[0] = r;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(name_ + ": " + e.what());
  }
}

void Conv1d::load(const std::map<std::string, Tensor>& state, const std::string& prefix) {
  load(lookup_in(state), prefix);
}
void Conv1d::load(const WeightLookup& get, const std::string& prefix) {
  // Shapes checked by the mapping; the weight is made only if the engine reads it.
  const ConvWeights w = map_conv1d_state(get, prefix, cfg_.in_channels, cfg_.out_channels,
                                         cfg_.kernel_size, cfg_.bias);
  build(false, {cfg_.kernel_size, 1}, {cfg_.stride, 1}, {cfg_.dilation, 1}, cfg_.bias, w.weight,
        w.bias);
}
void Conv1d::set_weights(const Tensor& weight, const Tensor& bias) {
  MESHNN_CHECK_AS(WeightError,
                  weight.shape() == Shape({cfg_.out_channels, cfg_.in_channels, cfg_.kernel_size}),
                  name_, ": weight shape ", shape_str(weight.shape()), ", expected ",
                  shape_str({cfg_.out_channels, cfg_.in_channels, cfg_.kernel_size}));
  MESHNN_CHECK_AS(WeightError, !cfg_.bias || bias.shape() == Shape({cfg_.out_channels}), name_,
                  ": bias shape ", bias.defined() ? shape_str(bias.shape()) : "undefined",
                  ", expected (", cfg_.out_channels, ")");
  build(false, {cfg_.kernel_size, 1}, {cfg_.stride, 1}, {cfg_.dilation, 1}, cfg_.bias,
        MappedWeight(weight.dtype() == DType::f32 ? weight : weight.to(DType::f32)),
        cfg_.bias && bias.dtype() != DType::f32 ? bias.to(DType::f32) : bias);
}

// ---- Conv2d --------------------------------------------------------------------------------

Conv2d::Conv2d(const Conv2dConfig& cfg, std::string name)
    : ConvLayerBase(std::move(name), 2, cfg.in_channels, cfg.out_channels, cfg.precision),
      cfg_(cfg) {
  for (int a = 0; a < 2; ++a) {
    MESHNN_CHECK(cfg.kernel_size[a] > 0 && cfg.stride[a] > 0 && cfg.dilation[a] > 0, name_,
                 ": kernel_size, stride and dilation must be > 0 on axis ", a);
    try {
      auto [l, r] = ops::conv2d_pads(a, cfg.kernel_size[a], cfg.dilation[a], cfg.padding_mode);
      pad_l_[a] = l;
      pad_r_[a] = r;
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(name_ + ": " + e.what());
    }
  }
}

void Conv2d::load(const std::map<std::string, Tensor>& state, const std::string& prefix) {
  load(lookup_in(state), prefix);
}
void Conv2d::load(const WeightLookup& get, const std::string& prefix) {
  const ConvWeights w = map_conv2d_state(get, prefix, cfg_.in_channels, cfg_.out_channels,
                                         cfg_.kernel_size[0], cfg_.kernel_size[1], cfg_.bias);
  build(false, cfg_.kernel_size, cfg_.stride, cfg_.dilation, cfg_.bias, w.weight, w.bias);
}
void Conv2d::set_weights(const Tensor& weight, const Tensor& bias) {
  const Shape ws{cfg_.out_channels, cfg_.in_channels, cfg_.kernel_size[0], cfg_.kernel_size[1]};
  MESHNN_CHECK_AS(WeightError, weight.shape() == ws, name_, ": weight shape ",
                  shape_str(weight.shape()), ", expected ", shape_str(ws));
  MESHNN_CHECK_AS(WeightError, !cfg_.bias || bias.shape() == Shape({cfg_.out_channels}), name_,
                  ": bias shape ", bias.defined() ? shape_str(bias.shape()) : "undefined",
                  ", expected (", cfg_.out_channels, ")");
  build(false, cfg_.kernel_size, cfg_.stride, cfg_.dilation, cfg_.bias,
        MappedWeight(weight.dtype() == DType::f32 ? weight : weight.to(DType::f32)),
        cfg_.bias && bias.dtype() != DType::f32 ? bias.to(DType::f32) : bias);
}

// ---- ConvTranspose1d -----------------------------------------------------------------------

ConvTranspose1d::ConvTranspose1d(const ConvTranspose1dConfig& cfg, std::string name)
    : ConvLayerBase(std::move(name), 1, cfg.in_channels, cfg.out_channels, cfg.precision),
      cfg_(cfg) {
  MESHNN_CHECK(cfg.kernel_size > 0 && cfg.stride > 0 && cfg.dilation > 0, name_,
               ": kernel_size, stride and dilation must be > 0, got ", cfg.kernel_size, ", ",
               cfg.stride, ", ", cfg.dilation);
  try {
    auto [l, r] =
        ops::conv_transpose1d_pads(cfg.kernel_size, cfg.stride, cfg.padding, cfg.output_padding);
    pad_l_[0] = l;
    pad_r_[0] = r;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(name_ + ": " + e.what());
  }
}

void ConvTranspose1d::load(const std::map<std::string, Tensor>& state, const std::string& prefix) {
  load(lookup_in(state), prefix);
}
void ConvTranspose1d::load(const WeightLookup& get, const std::string& prefix) {
  const ConvWeights w = map_conv_transpose1d_state(get, prefix, cfg_.in_channels, cfg_.out_channels,
                                                   cfg_.kernel_size, cfg_.bias);
  build(true, {cfg_.kernel_size, 1}, {cfg_.stride, 1}, {cfg_.dilation, 1}, cfg_.bias, w.weight,
        w.bias);
}
void ConvTranspose1d::set_weights(const Tensor& weight, const Tensor& bias) {
  const Shape ws{cfg_.in_channels, cfg_.out_channels, cfg_.kernel_size};
  MESHNN_CHECK_AS(WeightError, weight.shape() == ws, name_, ": weight shape ",
                  shape_str(weight.shape()), ", expected ", shape_str(ws),
                  " (torch ConvTranspose1d layout: in, out, k)");
  MESHNN_CHECK_AS(WeightError, !cfg_.bias || bias.shape() == Shape({cfg_.out_channels}), name_,
                  ": bias shape ", bias.defined() ? shape_str(bias.shape()) : "undefined",
                  ", expected (", cfg_.out_channels, ")");
  build(true, {cfg_.kernel_size, 1}, {cfg_.stride, 1}, {cfg_.dilation, 1}, cfg_.bias,
        MappedWeight(weight.dtype() == DType::f32 ? weight : weight.to(DType::f32)),
        cfg_.bias && bias.dtype() != DType::f32 ? bias.to(DType::f32) : bias);
}

}  // namespace meshnn
