// Checkpoint → layer weight mapping, one function per layer.
//
// Keys stay exactly as PyTorch wrote them. Every conv accepts, under its prefix:
//   weight | conv.weight                                  (plain; conv.* is the CausalConv
//   wrappers' alias) weight_g + weight_v | conv.weight_g + conv.weight_v   (legacy torch
//   weight_norm, dim 0) parametrizations.weight.original0 / original1         (torch's newer
//   weight-norm parametrisation) bias | conv.bias
// The result is the f32 weight in PyTorch layout; packing for oneDNN happens in the conv engine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn {

// Returns the tensor stored under a full key, or nullopt.
using WeightLookup = std::function<std::optional<Tensor>(const std::string& key)>;
// A lookup over an in-memory state dict (kept by reference: the map must outlive the lookup).
WeightLookup lookup_in(const std::map<std::string, Tensor>& state);
// "a.b" + "weight" → "a.b.weight"; "" + "weight" → "weight"; a trailing '.' on prefix is accepted.
std::string join_key(const std::string& prefix, const std::string& name);

// The tensor names a layer adds under its prefix (the only place that spells them): nn.Linear,
// LayerNorm, Embedding and the convs read `weight` / `bias`; GR00T's CategorySpecificLinear reads
// `W` (E, in, out) / `b` (E, out).
std::string weight_key(const std::string& prefix);
std::string bias_key(const std::string& prefix);
std::string category_weight_key(const std::string& prefix);
std::string category_bias_key(const std::string& prefix);

// The two spellings of an unfolded weight norm, as the names of g and v under a layer's prefix
// (the only place that spells them): torch's legacy `weight_g` / `weight_v` and its
// parametrisation `parametrizations.weight.original0` / `original1`. The loaders below and the
// all-keys checker (models/common/checkpoint_check.cc) both read this list.
struct WeightNormNames {
  std::string g, v;
};
const std::vector<WeightNormNames>& weight_norm_names();

// Weight-norm folding W = g · v / ‖v‖ with the norm over every dim except 0 (no epsilon), in f64.
// g: (D0, 1, …, 1) or (D0); v: (D0, …). For ConvTranspose1d dim 0 is C_in, so the norm is per
// INPUT channel. `key` names v in errors.
Tensor fold_weight_norm(const Tensor& g, const Tensor& v, const std::string& key);

// The tensors a conv layer reads under `prefix`, by their first accepted spelling (plain
// weight / bias, or conv.weight / conv.bias for the CausalConv wrappers when `wrapped`) → shape.
// bias_channels: C_out, or 0 for a layer without bias.
std::map<std::string, Shape> conv_tensor_names(const std::string& prefix, const Shape& weight_shape,
                                               int64_t bias_channels, bool wrapped = false);

// A conv weight as mapped from a checkpoint: the f32 PyTorch-layout tensor, made from the stored
// tensors (a bf16 → f32 copy, a weight-norm fold) only when something reads its values. Its origin
// names it without making it — a hash of the stored tensors' dtypes, shapes and bytes and of the
// step that makes the weight from them — so a layer whose transformed filters are already in the
// filter cache never makes it (docs/filter_cache.md, "Never silently stale"). Read by the one
// layer built from it (not thread-safe).
class MappedWeight {
 public:
  MappedWeight() = default;
  // Values already made (f32): no origin; the filter cache hashes the values.
  MappedWeight(Tensor f32);  // NOLINT: made values convert
  // Made by `make` (f32, `shape`) from `stored`, the checkpoint's tensors, by the step `step`
  // names (e.g. "weight", "weight_norm").
  MappedWeight(Shape shape, std::vector<Tensor> stored, const char* step,
               std::function<Tensor()> make);
  const Shape& shape() const;
  bool has_origin() const;
  // The hash of the stored tensors and the step (computed on the first call).
  uint64_t origin() const;
  // The f32 values (made on the first call, then kept).
  const Tensor& get() const;

 private:
  struct State;
  std::shared_ptr<State> s_;
};

struct ConvWeights {
  MappedWeight weight;  // f32, PyTorch layout
  Tensor bias;          // f32 (C_out), undefined when the layer has no bias
};

// Conv1d: weight (C_out, C_in, K), bias (C_out).
ConvWeights map_conv1d_state(const WeightLookup& get, const std::string& prefix, int64_t c_in,
                             int64_t c_out, int64_t k, bool bias);
// Conv2d: weight (C_out, C_in, Kh, Kw), bias (C_out).
ConvWeights map_conv2d_state(const WeightLookup& get, const std::string& prefix, int64_t c_in,
                             int64_t c_out, int64_t kh, int64_t kw, bool bias);
// ConvTranspose1d: weight (C_in, C_out, K) kept as is (the engine describes it to oneDNN with
// tag::bac — no flip or transpose by hand), bias (C_out); weight-norm folded per input channel.
ConvWeights map_conv_transpose1d_state(const WeightLookup& get, const std::string& prefix,
                                       int64_t c_in, int64_t c_out, int64_t k, bool bias);

}  // namespace meshnn
