#include "meshnn/layers/state_dict.h"

#include <cmath>
#include <vector>

#include "core/populate.h"
#include "kernels/filter_cache.h"
#include "meshnn/core/error.h"
#include "meshnn/core/profile.h"

namespace meshnn {

// Part of every origin: bump it when a step from stored tensors to f32 weights changes its
// arithmetic (Tensor::to, fold_weight_norm), so filter cache entries named by an older origin are
// never found again.
constexpr int64_t kMappedWeightVersion = 1;

struct MappedWeight::State {
  Shape shape;
  std::vector<Tensor> stored;  // empty: made already, no origin
  const char* step = nullptr;
  std::function<Tensor()> make;
  Tensor made;
  uint64_t origin = 0;
  bool origin_known = false;
};

MappedWeight::MappedWeight(Tensor f32) : s_(std::make_shared<State>()) {
  f32.check_dtype(DType::f32);
  s_->shape = f32.shape();
  s_->made = std::move(f32);
}

MappedWeight::MappedWeight(Shape shape, std::vector<Tensor> stored, const char* step,
                           std::function<Tensor()> make)
    : s_(std::make_shared<State>()) {
  s_->shape = std::move(shape);
  s_->stored = std::move(stored);
  s_->step = step;
  s_->make = std::move(make);
}

const Shape& MappedWeight::shape() const {
  MESHNN_CHECK(s_ != nullptr, "mapped weight: empty");
  return s_->shape;
}

bool MappedWeight::has_origin() const { return s_ != nullptr && !s_->stored.empty(); }

uint64_t MappedWeight::origin() const {
  MESHNN_CHECK(has_origin(), "mapped weight: no origin (values given directly)");
  if (!s_->origin_known) {
    ProfileScope prof("load.weight_origin");
    kernels::FilterKey key(s_->step);
    key.add(kMappedWeightVersion);
    for (const Tensor& t : s_->stored) {
      // Usually a view into the mapped checkpoint, first read here: mapped in one kernel walk,
      // not a fault per page.
      populate_pages_for_reading(t.raw(), t.nbytes());
      key.add(static_cast<int64_t>(t.dtype())).add(t.rank());
      for (const int64_t d : t.shape()) key.add(d);
      key.add_bytes(t.raw(), t.nbytes());
    }
    s_->origin = key.value();
    s_->origin_known = true;
  }
  return s_->origin;
}

const Tensor& MappedWeight::get() const {
  MESHNN_CHECK(s_ != nullptr, "mapped weight: empty");
  if (!s_->made.defined()) {
    s_->made = s_->make();
    MESHNN_CHECK(s_->made.dtype() == DType::f32 && s_->made.shape() == s_->shape,
                 "mapped weight: made ", shape_str(s_->made.shape()), ", expected f32 ",
                 shape_str(s_->shape));
  }
  return s_->made;
}

namespace {

Tensor as_f32(const Tensor& t) {
  if (t.dtype() == DType::f32) return t;
  ProfileScope prof("load.to_f32");
  return t.to(DType::f32);
}

void check_shape(const Tensor& t, const Shape& expected, const std::string& key) {
  MESHNN_CHECK_AS(WeightError, t.shape() == expected, "weight '", key, "' has shape ",
                  shape_str(t.shape()), ", expected ", shape_str(expected));
}

// The conv weight under `prefix` in any of the accepted spellings (see state_dict.h).
MappedWeight resolve_weight(const WeightLookup& get, const std::string& prefix,
                            const Shape& expected) {
  std::vector<std::string> tried;
  for (const char* scope : {"", "conv."}) {
    const std::string base = join_key(prefix, std::string(scope));
    const std::string wkey = base + "weight";
    if (auto w = get(wkey)) {
      check_shape(*w, expected, wkey);
      const Tensor stored = *w;
      return MappedWeight(expected, {stored}, "weight", [stored] { return as_f32(stored); });
    }
    tried.push_back(wkey);
    for (const WeightNormNames& names : weight_norm_names()) {
      const std::string gkey = base + names.g, vkey = base + names.v;
      auto g = get(gkey);
      auto v = get(vkey);
      if (g && v) {
        check_shape(*v, expected, vkey);
        Shape gshape(expected.size(), 1);
        gshape[0] = expected[0];
        // torch stores g as (D0, 1, …, 1); accept a flat (D0) too.
        if (g->shape() != Shape{expected[0]}) check_shape(*g, gshape, gkey);
        const Tensor gs = *g, vs = *v;
        return MappedWeight(expected, {gs, vs}, "weight_norm",
                            [gs, vs, vkey] { return fold_weight_norm(gs, vs, vkey); });
      }
      MESHNN_CHECK_AS(WeightError, !g && !v, "weight-norm pair incomplete: found '",
                      g ? gkey : vkey, "' but not '", g ? vkey : gkey, "'");
      tried.push_back(gkey + "/" + names.v);
    }
  }
  std::string list;
  for (const auto& k : tried) list += (list.empty() ? "" : ", ") + k;
  throw WeightError(detail::concat("missing weight for '", prefix, "' (shape ", shape_str(expected),
                                   "): tried ", list));
}

Tensor resolve_bias(const WeightLookup& get, const std::string& prefix, int64_t c_out) {
  for (const char* name : {"bias", "conv.bias"}) {
    const std::string key = join_key(prefix, name);
    if (auto b = get(key)) {
      check_shape(*b, Shape{c_out}, key);
      return as_f32(*b);
    }
  }
  throw WeightError(detail::concat("missing bias '", join_key(prefix, "bias"), "' (or '",
                                   join_key(prefix, "conv.bias"), "'), expected shape (", c_out,
                                   ")"));
}

ConvWeights map_common(const WeightLookup& get, const std::string& prefix, const Shape& wshape,
                       int64_t c_out, bool bias) {
  ConvWeights out;
  out.weight = resolve_weight(get, prefix, wshape);
  if (bias) out.bias = resolve_bias(get, prefix, c_out);
  return out;
}

}  // namespace

WeightLookup lookup_in(const std::map<std::string, Tensor>& state) {
  return [&state](const std::string& key) -> std::optional<Tensor> {
    auto it = state.find(key);
    if (it == state.end()) return std::nullopt;
    return it->second;
  };
}

std::map<std::string, Shape> conv_tensor_names(const std::string& prefix, const Shape& weight_shape,
                                               int64_t bias_channels, bool wrapped) {
  const std::string base = join_key(prefix, wrapped ? "conv." : "");
  std::map<std::string, Shape> out{{base + "weight", weight_shape}};
  if (bias_channels > 0) out[base + "bias"] = Shape{bias_channels};
  return out;
}

std::string weight_key(const std::string& prefix) { return join_key(prefix, "weight"); }
std::string bias_key(const std::string& prefix) { return join_key(prefix, "bias"); }
std::string category_weight_key(const std::string& prefix) { return join_key(prefix, "W"); }
std::string category_bias_key(const std::string& prefix) { return join_key(prefix, "b"); }

const std::vector<WeightNormNames>& weight_norm_names() {
  static const std::vector<WeightNormNames> names = {
      {"weight_g", "weight_v"},
      {"parametrizations.weight.original0", "parametrizations.weight.original1"}};
  return names;
}

std::string join_key(const std::string& prefix, const std::string& name) {
  if (prefix.empty()) return name;
  if (prefix.back() == '.') return prefix + name;
  return prefix + "." + name;
}

Tensor fold_weight_norm(const Tensor& g_in, const Tensor& v_in, const std::string& key) {
  MESHNN_CHECK_AS(WeightError, v_in.rank() >= 1 && g_in.numel() == v_in.dim(0), "weight norm '",
                  key, "': g has shape ", shape_str(g_in.shape()), ", expected ",
                  v_in.rank() >= 1 ? v_in.dim(0) : 0, " values for v of shape ",
                  shape_str(v_in.shape()));
  ProfileScope prof("load.weight_norm_fold");
  const Tensor g = as_f32(g_in), v = as_f32(v_in);
  const int64_t d0 = v.dim(0), inner = d0 ? v.numel() / d0 : 0;
  Tensor w = Tensor::empty(v.shape(), DType::f32);
  const float* vp = v.data<float>();
  const float* gp = g.data<float>();
  float* wp = w.data<float>();
  // Rows are independent (each its own f64 sum, in order): the same bits on any thread count.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < d0; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < inner; ++j) ss += double(vp[i * inner + j]) * vp[i * inner + j];
    // torch has no epsilon here: an all-zero slice gives NaN there; we give zeros instead.
    const double scale = ss > 0 ? double(gp[i]) / std::sqrt(ss) : 0.0;
    for (int64_t j = 0; j < inner; ++j) wp[i * inner + j] = float(vp[i * inner + j] * scale);
  }
  return w;
}

ConvWeights map_conv1d_state(const WeightLookup& get, const std::string& prefix, int64_t c_in,
                             int64_t c_out, int64_t k, bool bias) {
  return map_common(get, prefix, Shape{c_out, c_in, k}, c_out, bias);
}

ConvWeights map_conv2d_state(const WeightLookup& get, const std::string& prefix, int64_t c_in,
                             int64_t c_out, int64_t kh, int64_t kw, bool bias) {
  return map_common(get, prefix, Shape{c_out, c_in, kh, kw}, c_out, bias);
}

ConvWeights map_conv_transpose1d_state(const WeightLookup& get, const std::string& prefix,
                                       int64_t c_in, int64_t c_out, int64_t k, bool bias) {
  // dim 0 of a transposed conv's weight is C_in, so the weight-norm fold above is per input
  // channel, as torch.nn.utils.weight_norm(dim=0) computes it.
  return map_common(get, prefix, Shape{c_in, c_out, k}, c_out, bias);
}

}  // namespace meshnn
