// Channel tensor-parallel convolutions over one mesh axis (column-parallel conv, input channels
// all-gathered, output channels sharded). Internal: no model uses it (the audio models split time
// over the mesh; a channel split's gain has not been measured); kept with its tests for a BWE
// generator channel split on meshes wider than the time axis can use.
//
// Device i of the channel axis group (n members, coordinate order) holds output channels
// [i·C_out_pad/n, (i+1)·C_out_pad/n) of the weights and bias, sliced once at load from the full
// PyTorch-layout weight (dim 0 for Conv1d / Conv2d, dim 1 for ConvTranspose1d's (C_in, C_out, K)).
// Forward all-gathers the input along the channel dim (the last dim of the channels-last tensor),
// runs the local conv with the full C_in and returns this device's output-channel shard, so two
// column-parallel convs chain with the activation kept channel-sharded between them.
//
// C not divisible by n: channels are padded up to C_pad = n·⌈C/n⌉ (zero weights and bias on the
// padded output channels, so those channels come out as zeros) and trimmed when gathered. The seed
// pads to 32·factor because its conv3d kernel tiles channels in 32s per device; oneDNN has no such
// constraint (see conv.cc), so here only divisibility by n matters.
//
// Time sharding composes: on a 2-D mesh put channels on one axis and time on the other; feed
// gather_input()'s result to conv1d_sharded(layer.local(), …) (time_shard.h).
//
// A default-constructed ChannelShard is the unsharded path: no communication, no padding.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "meshnn/core/tensor.h"
#include "meshnn/layers/conv.h"
#include "meshnn/layers/state_dict.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

// Channel split over one mesh axis of a device.
class ChannelShard {
 public:
  ChannelShard() = default;
  // InvalidArgument when `axis` is not an axis of the device's mesh (0 or 1).
  ChannelShard(Device& device, int axis);

  int axis() const { return axis_; }
  int parts() const { return parts_; }
  int index() const { return index_; }
  bool sharded() const { return parts_ > 1; }

  // C rounded up to a multiple of parts().
  int64_t padded(int64_t c) const { return (c + parts_ - 1) / parts_ * parts_; }
  // Channels per device: padded(c) / parts().
  int64_t shard_channels(int64_t c) const { return padded(c) / parts_; }
  // First global channel of this device's shard of a C-channel tensor.
  int64_t channel0(int64_t c) const { return index_ * shard_channels(c); }

  // Replicated full x: (…, C) → this device's (…, C_pad/n) chunk; padded channels are zeros.
  Tensor partition(const Tensor& full) const;
  // Shards x: (…, C_pad/n) → the full (…, C) on every device (padded channels dropped).
  // ShapeError when the last dim is not shard_channels(c).
  Tensor gather(const Tensor& x, int64_t c) const;

  // Rows [channel0(c), +shard_channels(c)) of dim `d` of a tensor whose dim d has size c, with
  // zero rows past c (weights / bias slicing at load).
  Tensor slice(const Tensor& t, int d, int64_t c) const;

 private:
  Device* device_ = nullptr;
  int axis_ = 0;
  int parts_ = 1;
  int index_ = 0;
};

// What a column-parallel forward receives: this device's channel shard (the output of a previous
// column-parallel layer or of ChannelShard::partition) or the full, replicated input.
enum class ChannelInput { sharded, full };

// Column-parallel Conv1d / Conv2d / ConvTranspose1d (explicitly instantiated for those three).
template <class Layer>
class ColumnParallel {
 public:
  using Config = std::remove_cvref_t<decltype(std::declval<const Layer&>().config())>;

  // cfg: the full (unsharded) layer; InvalidArgument naming `name` on a bad config.
  ColumnParallel(const Config& cfg, const ChannelShard& cs, std::string name);

  // Reads the full checkpoint tensors (any spelling state_dict.h accepts) and keeps this
  // device's output-channel slice. WeightError names a missing / misshaped key.
  void load(const std::map<std::string, Tensor>& state, const std::string& prefix);
  void load(const WeightLookup& get, const std::string& prefix);
  // Full weights in PyTorch layout (Conv1d (C_out, C_in, K), Conv2d (C_out, C_in, Kh, Kw),
  // ConvTranspose1d (C_in, C_out, K)); bias (C_out). WeightError on a shape mismatch.
  void set_weights(const Tensor& weight, const Tensor& bias);

  // x: (…, C_in_pad/n) sharded or (…, C_in) full → (…, C_in): the local conv's input.
  // ShapeError naming the layer when the last dim does not match `in`.
  Tensor gather_input(const Tensor& x, ChannelInput in = ChannelInput::sharded) const;
  // x: (B, T, C_in/n) [(B, H, W, C_in/n)] → (B, T_out, C_out_pad/n) [(B, H_out, W_out, …)].
  Tensor forward(const Tensor& x, ChannelInput in = ChannelInput::sharded);
  // Same on an input that already carries its time halo (ConvLayerBase::forward_padded).
  Tensor forward_padded(const Tensor& x_with_halo, ChannelInput in = ChannelInput::sharded);
  // y: (…, C_out_pad/n) → (…, C_out) on every device.
  Tensor gather_output(const Tensor& y) const { return cs_.gather(y, cfg_.out_channels); }

  const Config& config() const { return cfg_; }  // the full layer's config
  const ChannelShard& shard() const { return cs_; }
  int64_t out_channels_shard() const { return cs_.shard_channels(cfg_.out_channels); }
  // The local conv: full C_in, out_channels_shard() outputs.
  Layer& local() { return local_; }
  const std::string& name() const { return name_; }

 private:
  Config cfg_;
  ChannelShard cs_;
  std::string name_;
  Layer local_;
};

using ColumnParallelConv1d = ColumnParallel<Conv1d>;
using ColumnParallelConv2d = ColumnParallel<Conv2d>;
using ColumnParallelConvTranspose1d = ColumnParallel<ConvTranspose1d>;

extern template class ColumnParallel<Conv1d>;
extern template class ColumnParallel<Conv2d>;
extern template class ColumnParallel<ConvTranspose1d>;

}  // namespace meshnn
