#include "layers/channel_parallel.h"

#include <algorithm>

#include "meshnn/core/error.h"
#include "meshnn/mesh/ccl.h"

namespace meshnn {

// ---- ChannelShard ----------------------------------------------------------------------------

ChannelShard::ChannelShard(Device& device, int axis) : device_(&device), axis_(axis) {
  const Mesh& m = device.mesh();
  MESHNN_CHECK(axis == 0 || axis == 1, "ChannelShard: mesh axis ", axis, " is not an axis of the ",
               m.rows(), "x", m.cols(), " mesh (0 = rows, 1 = cols)");
  parts_ = device.axis_size(axis);
  index_ = device.coord(axis);
}

Tensor ChannelShard::slice(const Tensor& t, int d, int64_t c) const {
  d = t.norm_dim(d);
  MESHNN_CHECK_AS(ShapeError, t.dim(d) == c, "ChannelShard::slice: dim ", d, " of ",
                  shape_str(t.shape()), " is not ", c);
  if (!sharded()) return t;
  const int64_t s = shard_channels(c), start = channel0(c);
  const int64_t have = std::clamp<int64_t>(c - start, 0, s);
  if (have == s) return t.narrow(d, start, s);
  Shape zs = t.shape();
  zs[d] = s - have;
  Tensor zeros(zs, t.dtype());
  if (have == 0) return zeros;
  return concat({t.narrow(d, start, have), zeros}, d);
}

Tensor ChannelShard::partition(const Tensor& full) const {
  MESHNN_CHECK_AS(ShapeError, full.defined() && full.rank() >= 1,
                  "ChannelShard::partition: needs a tensor with a channel dim");
  return slice(full, -1, full.dim(-1));
}

Tensor ChannelShard::gather(const Tensor& x, int64_t c) const {
  MESHNN_CHECK_AS(ShapeError, x.defined() && x.rank() >= 1 && x.dim(-1) == shard_channels(c),
                  "ChannelShard::gather: channel shard of ", shape_str(x.shape()), ", expected ",
                  shard_channels(c), " channels (", c, " over ", parts_, " devices)");
  if (!sharded()) return x;
  Tensor full = device_->ccl().all_gather(x, -1, axis_);
  return padded(c) == c ? full : full.narrow(-1, 0, c);
}

// ---- ColumnParallel --------------------------------------------------------------------------

namespace {

// Per layer type: the dim of the PyTorch weight that indexes output channels, and the state-dict
// mapping for the full (unsharded) layer.
template <class Layer>
struct ConvTraits;

template <>
struct ConvTraits<Conv1d> {
  static constexpr int kOutDim = 0;
  static ConvWeights map(const WeightLookup& get, const std::string& prefix,
                         const Conv1dConfig& c) {
    return map_conv1d_state(get, prefix, c.in_channels, c.out_channels, c.kernel_size, c.bias);
  }
  static Shape weight_shape(const Conv1dConfig& c) {
    return {c.out_channels, c.in_channels, c.kernel_size};
  }
};

template <>
struct ConvTraits<Conv2d> {
  static constexpr int kOutDim = 0;
  static ConvWeights map(const WeightLookup& get, const std::string& prefix,
                         const Conv2dConfig& c) {
    return map_conv2d_state(get, prefix, c.in_channels, c.out_channels, c.kernel_size[0],
                            c.kernel_size[1], c.bias);
  }
  static Shape weight_shape(const Conv2dConfig& c) {
    return {c.out_channels, c.in_channels, c.kernel_size[0], c.kernel_size[1]};
  }
};

template <>
struct ConvTraits<ConvTranspose1d> {
  static constexpr int kOutDim = 1;  // torch layout (C_in, C_out, K)
  static ConvWeights map(const WeightLookup& get, const std::string& prefix,
                         const ConvTranspose1dConfig& c) {
    return map_conv_transpose1d_state(get, prefix, c.in_channels, c.out_channels, c.kernel_size,
                                      c.bias);
  }
  static Shape weight_shape(const ConvTranspose1dConfig& c) {
    return {c.in_channels, c.out_channels, c.kernel_size};
  }
};

// The local layer's config: full C_in, this device's padded C_out shard.
template <class Config>
Config shard_config(const Config& cfg, const ChannelShard& cs, const std::string& name) {
  MESHNN_CHECK(cfg.in_channels > 0 && cfg.out_channels > 0, name, ": channels must be > 0, got in ",
               cfg.in_channels, ", out ", cfg.out_channels);
  Config local = cfg;
  local.out_channels = cs.shard_channels(cfg.out_channels);
  return local;
}

}  // namespace

template <class Layer>
ColumnParallel<Layer>::ColumnParallel(const Config& cfg, const ChannelShard& cs, std::string name)
    : cfg_(cfg), cs_(cs), name_(std::move(name)), local_(shard_config(cfg, cs, name_), name_) {}

template <class Layer>
void ColumnParallel<Layer>::load(const std::map<std::string, Tensor>& state,
                                 const std::string& prefix) {
  load(lookup_in(state), prefix);
}

template <class Layer>
void ColumnParallel<Layer>::load(const WeightLookup& get, const std::string& prefix) {
  // The mapping checks the full shapes and names the key; slicing happens after weight-norm
  // folding (whose norm for ConvTranspose1d runs over C_out, so it needs the full weight).
  ConvWeights w = ConvTraits<Layer>::map(get, prefix, cfg_);
  set_weights(w.weight, w.bias);
}

template <class Layer>
void ColumnParallel<Layer>::set_weights(const Tensor& weight, const Tensor& bias) {
  const Shape ws = ConvTraits<Layer>::weight_shape(cfg_);
  MESHNN_CHECK_AS(WeightError, weight.defined() && weight.shape() == ws, name_,
                  ": full weight shape ",
                  weight.defined() ? shape_str(weight.shape()) : std::string("undefined"),
                  ", expected ", shape_str(ws));
  MESHNN_CHECK_AS(WeightError,
                  !cfg_.bias || (bias.defined() && bias.shape() == Shape({cfg_.out_channels})),
                  name_, ": full bias shape ",
                  bias.defined() ? shape_str(bias.shape()) : std::string("undefined"),
                  ", expected (", cfg_.out_channels, ")");
  const int64_t c = cfg_.out_channels;
  local_.set_weights(cs_.slice(weight, ConvTraits<Layer>::kOutDim, c),
                     cfg_.bias ? cs_.slice(bias, 0, c) : Tensor());
}

template <class Layer>
Tensor ColumnParallel<Layer>::gather_input(const Tensor& x, ChannelInput in) const {
  const int64_t c = cfg_.in_channels;
  MESHNN_CHECK_AS(ShapeError, x.defined() && x.rank() >= 1, name_, ": undefined or scalar input");
  if (in == ChannelInput::full) {
    MESHNN_CHECK_AS(ShapeError, x.dim(-1) == c, name_, ": full input ", shape_str(x.shape()),
                    " has ", x.dim(-1), " channels, expected ", c);
    return x;
  }
  MESHNN_CHECK_AS(ShapeError, x.dim(-1) == cs_.shard_channels(c), name_, ": channel-sharded input ",
                  shape_str(x.shape()), " has ", x.dim(-1), " channels, expected ",
                  cs_.shard_channels(c), " (", c, " over ", cs_.parts(), " devices)");
  return cs_.gather(x, c);
}

template <class Layer>
Tensor ColumnParallel<Layer>::forward(const Tensor& x, ChannelInput in) {
  return local_.forward(gather_input(x, in));
}

template <class Layer>
Tensor ColumnParallel<Layer>::forward_padded(const Tensor& x_with_halo, ChannelInput in) {
  return local_.forward_padded(gather_input(x_with_halo, in));
}

template class ColumnParallel<Conv1d>;
template class ColumnParallel<Conv2d>;
template class ColumnParallel<ConvTranspose1d>;

}  // namespace meshnn
