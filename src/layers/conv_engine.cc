#include "layers/conv_engine.h"

#include "layers/conv_algorithm.h"
#include "meshnn/core/error.h"

namespace meshnn::conv {
namespace {

// bf16 layers run on bf16 Winograd only when MESHNN_CONV_ALGO asks for the fast algorithms:
// measured no faster than oneDNN's bf16 conv here and 2.7 dB less accurate (docs/benchmarks.md),
// so the default bf16 path stays oneDNN.
bool winograd_bf16_requested() {
  const Conv1dAlgo o = conv_algo_override();
  return o == Conv1dAlgo::winograd || o == Conv1dAlgo::fft;
}

// The algorithm of a 1-D layer: our own kernels for fp32 1-D convs (the choice per shape lives in
// conv_algorithm), oneDNN for everything else.
Conv1dAlgo algo_choice(const ConvSpec& spec) {
  const bool ours = spec.kind == ConvKind::conv && spec.spatial == 1 &&
                    (spec.precision == Precision::fp32 ||
                     (spec.precision == Precision::bf16 && winograd_bf16_requested()));
  return ours ? choose_conv1d(
                    {spec.c_in, spec.c_out, spec.kernel[0], spec.stride[0], spec.dilation[0]})
              : Conv1dAlgo::onednn;
}

}  // namespace

ConvEngine::ConvEngine(const ConvSpec& spec, const Tensor& weights, const Tensor& bias)
    : spec_(spec) {
  MESHNN_CHECK(spec.spatial == 1 || spec.spatial == 2, "conv engine: spatial rank ", spec.spatial);
  MESHNN_CHECK(!(spec.kind == ConvKind::deconv && spec.spatial != 1),
               "conv engine: only 1-D deconvolution is supported");
  weights.check_dtype(DType::f32);
  if (spec.bias) bias.check_dtype(DType::f32);
  const float* b = spec.bias ? bias.data<float>() : nullptr;
  // Our own kernel reads the caller's weights directly (no split copy: it rounds its transformed
  // filters itself in bf16) and keeps its own copy of them and the bias.
  if (auto own = make_conv1d_algorithm(
          algo_choice(spec),
          {spec.c_in, spec.c_out, spec.kernel[0], spec.stride[0], spec.dilation[0]},
          weights.data<float>(), b, spec.precision)) {
    algo1d_ = std::move(own);
    return;
  }
  if (spec.kind == ConvKind::conv && spec.spatial == 2 &&
      (spec.precision == Precision::fp32 ||
       (spec.precision == Precision::bf16 && winograd_bf16_requested()))) {
    const Conv2dGeometry g{spec.c_in,      spec.c_out,     spec.kernel[0],   spec.kernel[1],
                           spec.stride[0], spec.stride[1], spec.dilation[0], spec.dilation[1]};
    if (auto own =
            make_conv2d_algorithm(choose_conv2d(g), g, weights.data<float>(), b, spec.precision)) {
      algo2d_ = std::move(own);
      return;
    }
  }
  onednn_ = std::make_unique<dnnl_glue::ConvPrimitives>(spec, weights, bias);
}

ConvEngine::~ConvEngine() = default;

int64_t ConvEngine::out_extent(int d, int64_t in, const ConvPads& pads) const {
  return dnnl_glue::conv_out_extent(spec_, d, in, pads);
}

void ConvEngine::run(const Tensor& src, Tensor& dst, const ConvPads& pads, bool accumulate) {
  if (algo1d_)
    algo1d_->run(src.data<float>(), src.dim(0), src.dim(1), pads.l[0], dst.data<float>(),
                 dst.dim(1), accumulate);
  else if (algo2d_)
    algo2d_->run(src.data<float>(), src.dim(0), src.dim(1), src.dim(2), pads.l[0], pads.l[1],
                 dst.data<float>(), dst.dim(1), dst.dim(2), accumulate);
  else
    onednn_->run(src, dst, pads, accumulate);
}

void ConvEngine::prepare(const Shape& src_shape, const ConvPads& pads) {
  (void)impl_info(src_shape, pads);
}

std::string ConvEngine::impl_info(const Shape& src_shape, const ConvPads& pads) {
  if (algo1d_) return algo1d_->name();
  if (algo2d_) return algo2d_->name();
  return onednn_->impl_info(src_shape, pads);
}

std::unique_ptr<ConvEngine> ConvEngine::fork() const {
  std::unique_ptr<ConvEngine> e(new ConvEngine());
  e->spec_ = spec_;
  e->algo1d_ = algo1d_;  // shared by reference: no copy, no repacking
  e->algo2d_ = algo2d_;
  if (onednn_) e->onednn_ = onednn_->fork();
  return e;
}

size_t ConvEngine::plan_count() const { return onednn_ ? onednn_->plan_count() : 0; }

const void* ConvEngine::weights_identity() const {
  if (algo1d_) return algo1d_.get();
  if (algo2d_) return algo2d_.get();
  return onednn_->weights_identity();
}

}  // namespace meshnn::conv
