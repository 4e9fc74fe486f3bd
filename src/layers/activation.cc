#include "meshnn/layers/activation.h"

#include <algorithm>
#include <cmath>

#include "kernels/snake.h"
#include "meshnn/ops/filter_design.h"
#include "meshnn/ops/padding.h"

namespace meshnn::layers {
namespace {

constexpr float kSnakeEps = 1e-9f;

std::vector<float> vec_f32(const Tensor& t) {
  const Tensor f = t.dtype() == DType::f32 ? t : t.to(DType::f32);
  const float* p = f.data<float>();
  return std::vector<float>(p, p + f.numel());
}

Tensor get_key(const std::map<std::string, Tensor>& sd, const std::string& key) {
  auto it = sd.find(key);
  MESHNN_CHECK_AS(WeightError, it != sd.end(), "missing weight '", key, "'");
  return it->second;
}

std::vector<float> load_filter(const Tensor& t, const std::string& key) {
  MESHNN_CHECK_AS(WeightError, t.numel() == kernels::kAaTaps && (t.rank() == 1 || t.rank() == 3),
                  "weight '", key, "': expected a (1, 1, 12) filter, got ", shape_str(t.shape()));
  return vec_f32(t);
}

}  // namespace

SnakeParams make_snake_params(SnakeKind kind, const Tensor& alpha, const Tensor* beta,
                              bool alpha_logscale, int64_t channels, int64_t channel_align,
                              const std::string& what) {
  MESHNN_CHECK(channels >= 1, what, ": channels must be ≥ 1, got ", channels);
  auto check = [&](const Tensor& t, const char* nm) {
    MESHNN_CHECK_AS(WeightError,
                    t.defined() && t.numel() == channels && t.rank() >= 1 && t.dim(-1) == channels,
                    what, ".", nm, ": expected (", channels, ",), got ",
                    t.defined() ? shape_str(t.shape()) : std::string("nothing"));
  };
  check(alpha, "alpha");
  if (kind == SnakeKind::snake_beta) {
    MESHNN_CHECK_AS(WeightError, beta != nullptr, what, ".beta: SnakeBeta needs beta");
    check(*beta, "beta");
  }
  const int64_t ca = ops::aligned_channels(channels, channel_align);
  SnakeParams p;
  p.kind = kind;
  p.channels = channels;
  p.alpha.assign(ca, 0.f);  // padded α = 0: sin(0) = 0, so a padded channel is x ↦ x
  p.inv.assign(ca, 1.f / (1.f + kSnakeEps));  // padded β = 1 (seed rule)
  const std::vector<float> a = vec_f32(alpha);
  const std::vector<float> b =
      kind == SnakeKind::snake_beta ? vec_f32(*beta) : std::vector<float>();
  for (int64_t c = 0; c < channels; ++c) {
    // exp in f32 as torch does (the parameters are f32 tensors); ε is added after the exponential.
    const float al = alpha_logscale ? std::exp(a[c]) : a[c];
    const float be = kind == SnakeKind::snake_beta ? (alpha_logscale ? std::exp(b[c]) : b[c]) : al;
    p.alpha[c] = al;
    p.inv[c] = 1.f / (be + kSnakeEps);
  }
  return p;
}

Tensor snake_forward(const Tensor& x, const SnakeParams& p, bool force_scalar) {
  ops::check_btc(x, "snake");
  MESHNN_CHECK_AS(ShapeError, x.dim(2) == p.aligned(), "snake: x has ", x.dim(2),
                  " channels, parameters have ", p.aligned());
  Tensor y = Tensor::empty(x.shape());
  kernels::snake_rows_f32(x.data<float>(), x.dim(0) * x.dim(1), x.dim(2), p.alpha.data(),
                          p.inv.data(), y.data<float>(), force_scalar);
  return y;
}

AntiAliasedActivation::AntiAliasedActivation(std::string name, int64_t channels, SnakeKind kind,
                                             bool alpha_logscale, int64_t channel_align)
    : name_(std::move(name)),
      channels_(channels),
      channel_align_(channel_align),
      logscale_(alpha_logscale) {
  MESHNN_CHECK(channels >= 1, name_, ": channels must be ≥ 1, got ", channels);
  MESHNN_CHECK(channel_align >= 1, name_, ": channel_align must be ≥ 1, got ", channel_align);
  params_.kind = kind;
  params_.channels = channels;
  up_ = ops::kaiser_sinc_filter1d(0.25, 0.3, kernels::kAaTaps);
  down_ = up_;
}

void AntiAliasedActivation::set_parameters(const Tensor& alpha, const Tensor* beta) {
  params_ = make_snake_params(params_.kind, alpha, beta, logscale_, channels_, channel_align_,
                              name_ + ".act");
  loaded_ = true;
}

std::map<std::string, Shape> AntiAliasedActivation::tensor_names(const std::string& prefix,
                                                                 int64_t channels, SnakeKind kind,
                                                                 bool with_filters) {
  std::map<std::string, Shape> out{{prefix + "act.alpha", {channels}}};
  if (kind == SnakeKind::snake_beta) out[prefix + "act.beta"] = {channels};
  if (with_filters) {
    out[prefix + "upsample.filter"] = {1, 1, 12};
    out[prefix + "downsample.lowpass.filter"] = {1, 1, 12};
  }
  return out;
}

void AntiAliasedActivation::load_state_dict(const std::map<std::string, Tensor>& sd,
                                            const std::string& prefix) {
  const Tensor alpha = get_key(sd, prefix + "act.alpha");
  Tensor beta;
  if (params_.kind == SnakeKind::snake_beta) beta = get_key(sd, prefix + "act.beta");
  set_parameters(alpha, params_.kind == SnakeKind::snake_beta ? &beta : nullptr);
  // The checkpoints store the filters; loaded values win over computed ones (ltx-core's
  // hand-written sinc can differ from torch.sinc in the last bit of one tap).
  if (auto it = sd.find(prefix + "upsample.filter"); it != sd.end())
    up_ = load_filter(it->second, prefix + "upsample.filter");
  for (const char* k : {"downsample.lowpass.filter", "downsample.filter"}) {
    if (auto it = sd.find(prefix + k); it != sd.end()) {
      down_ = load_filter(it->second, prefix + k);
      break;
    }
  }
}

void AntiAliasedActivation::check_input(const Tensor& x, const char* fn) const {
  MESHNN_CHECK(loaded_, name_, ".", fn, ": parameters not loaded");
  MESHNN_CHECK_AS(ShapeError, x.defined() && x.rank() == 3, name_, ".", fn,
                  ": expected x of shape (B, T, C), got ",
                  x.defined() ? shape_str(x.shape()) : std::string("an undefined tensor"));
  MESHNN_CHECK_AS(ShapeError, x.dtype() == DType::f32, name_, ".", fn, ": expected f32, got ",
                  dtype_name(x.dtype()));
  MESHNN_CHECK_AS(ShapeError, x.dim(2) == params_.aligned(), name_, ".", fn, ": x ",
                  shape_str(x.shape()), " has ", x.dim(2), " channels, the activation has ",
                  params_.aligned());
}

void AntiAliasedActivation::run(const Tensor& slab, int64_t left_ctx, int64_t n, int64_t lo,
                                int64_t hi, Tensor& out) const {
  const int64_t B = slab.dim(0), Ts = slab.dim(1), C = slab.dim(2);
  MESHNN_CHECK_AS(ShapeError,
                  out.defined() && out.shape() == Shape({B, n, C}) && out.dtype() == DType::f32,
                  name_, ": out must be f32 (", B, ", ", n, ", ", C, "), got ",
                  out.defined() ? shape_str(out.shape()) : std::string("an undefined tensor"));
  if (hi <= lo) {  // a slab wholly inside the t-pad tail with no real row in reach
    out.fill_zero();
    return;
  }
  const float* x = slab.data<float>() + left_ctx * C;
  kernels::aa_snake_fused_f32(x, Ts * C, B, C, lo, hi, n, up_.data(), down_.data(),
                              params_.alpha.data(), params_.inv.data(), out.data<float>(), n * C);
}

void AntiAliasedActivation::forward_into(const Tensor& x, Tensor& out) const {
  check_input(x, "forward");
  MESHNN_CHECK_AS(ShapeError, x.dim(1) >= 1, name_, ".forward: empty sequence ",
                  shape_str(x.shape()));
  run(x, 0, x.dim(1), 0, x.dim(1), out);
}

Tensor AntiAliasedActivation::forward(const Tensor& x) const {
  check_input(x, "forward");
  Tensor out = Tensor::empty(x.shape());
  forward_into(x, out);
  return out;
}

void AntiAliasedActivation::forward_padded_into(const Tensor& slab, int64_t left_ctx,
                                                int64_t right_ctx, int64_t global_row0,
                                                int64_t global_T, Tensor& out) const {
  check_input(slab, "forward_padded");
  MESHNN_CHECK(left_ctx >= 0 && right_ctx >= 0, name_,
               ".forward_padded: context rows must be ≥ 0, got (", left_ctx, ", ", right_ctx, ")");
  MESHNN_CHECK(global_row0 >= 0 && global_T >= 1, name_,
               ".forward_padded: need global_row0 ≥ 0 and global_T ≥ 1, got ", global_row0, ", ",
               global_T);
  const int64_t n = slab.dim(1) - left_ctx - right_ctx;
  MESHNN_CHECK_AS(ShapeError, n >= 1, name_, ".forward_padded: slab ", shape_str(slab.shape()),
                  " has no interior rows after ", left_ctx, " + ", right_ctx, " context rows");
  const int64_t need_left = std::min(context_rows(), global_row0);
  const int64_t need_right = std::clamp(global_T - global_row0 - n, int64_t{0}, context_rows());
  MESHNN_CHECK_AS(ShapeError, left_ctx >= need_left && right_ctx >= need_right, name_,
                  ".forward_padded: shard at global row ", global_row0, " (", n, " rows of ",
                  global_T, ") needs ", need_left, " left and ", need_right,
                  " right context rows, got ", left_ctx, " and ", right_ctx);
  // Real rows in local coordinates (interior row 0 = global_row0): the slab clipped to [0,
  // global_T).
  const int64_t lo = std::max(-left_ctx, -global_row0);
  const int64_t hi = std::min(n + right_ctx, global_T - global_row0);
  run(slab, left_ctx, n, lo, hi, out);
}

Tensor AntiAliasedActivation::forward_padded(const Tensor& slab, int64_t left_ctx,
                                             int64_t right_ctx, int64_t global_row0,
                                             int64_t global_T) const {
  check_input(slab, "forward_padded");
  const int64_t n = slab.dim(1) - left_ctx - right_ctx;
  MESHNN_CHECK_AS(ShapeError, n >= 1, name_, ".forward_padded: slab ", shape_str(slab.shape()),
                  " has no interior rows after ", left_ctx, " + ", right_ctx, " context rows");
  Tensor out = Tensor::empty({slab.dim(0), n, slab.dim(2)});
  forward_padded_into(slab, left_ctx, right_ctx, global_row0, global_T, out);
  return out;
}

}  // namespace meshnn::layers
