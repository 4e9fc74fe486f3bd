// GR00T VL adapter and state encoder:
//   features (1, 1, S_pad, D) in the slot layout
//     → vlln (LayerNorm, eps 1e-5)                                       tap vlln_out
//     → VL self-attention × n (N1.5 / N1.7; none in N1.6)               taps vlsa_block{i}_out,
//                                                                       vl_self_attention_out
//     → vl (pad slots zeroed)                                           tap
//     dit_encoder_hidden_states → gather per key set (splice | onehot) → vl_sets (L_pad, D), pad
//     rows exactly zero → per cross block i: vl_set·Wkv_i + bkv_i → K_i, V_i (1, Nh, L_pad, Dh)
//     persistent buffers
//   state (1, 1, d) + embodiment → state encoder → state_features (1, 1, 1536)   tap state_features
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "meshnn/models/gr00t_config.h"

namespace meshnn {
class Device;
}

namespace meshnn::gr00t {

struct AdapterOutputs {
  Tensor vl;                              // (1, 1, S_pad, D) dit_encoder_hidden_states slots
  std::map<std::string, Tensor> vl_sets;  // key set → (1, 1, L_pad, D); "all" is vl itself
  // cross block → (K, V), the persistent buffers; head-parallel: this device's heads only,
  // (1, Nh/tp, L_pad, Dh), heads [tp_rank·Nh/tp, …)
  std::map<int, std::pair<Tensor, Tensor>> kv;
  Tensor state_features;               // (1, 1, out) when a state was given
  std::map<std::string, Tensor> taps;  // collect_taps only; slot-layout tensors
};

class VlAdapter {
 public:
  // Builds the plan (all validation), loads and packs the weights, allocates the persistent K/V
  // buffers and the working memory. `weights` maps Isaac-GR00T keys.
  // device: run head-parallel over options.mesh_axis of its mesh (every device of the axis group
  // builds its adapter and calls forward together, SPMD): column-parallel Q/K/V and FF1, row-
  // parallel output projection and FF2 with reduce-scatter over token rows, all-gather back;
  // each device hoists K/V for its own DiT heads. Null (or an axis of extent 1): one device.
  VlAdapter(const Config& cfg, const SlotLayout& layout, const WeightLookup& weights,
            const AdapterOptions& options = {},
            const std::string& weight_prefix = default_weight_prefix(), Device* device = nullptr);
  ~VlAdapter();
  VlAdapter(const VlAdapter&) = delete;
  VlAdapter& operator=(const VlAdapter&) = delete;

  // Another runner over the same weights, for another thread: the packed weights are shared, the
  // plans, scratch and persistent K/V buffers are its own. Rule: one runner per thread; any number
  // of runners of one adapter run concurrently. A head-parallel adapter's fork holds the same
  // head slice and keeps the device: bind it to a device of its own launch before running it.
  std::unique_ptr<VlAdapter> fork() const;
  // Head-parallel: run_spmd makes new devices on every launch, so a slice built on one launch
  // runs on a later launch of the same mesh shape after binding to the device at its coordinate
  // (InvalidArgument for another axis extent or coordinate). nullptr unbinds: forward is then an
  // InvalidArgument until the next bind. One-device adapters accept any device (it is not used).
  void bind_device(Device* device);

  const AdapterPlan& plan() const;
  // features: (1, 1, S_pad, D) | (1, S_pad, D) | (S_pad, D) f32 (bf16 accepted, converted);
  // vl_mask: (S_pad) key-valid mask (1 = attend), required when the version has VL-SA and
  // forbidden otherwise (its presence is fixed by the layout, as in the seed);
  // state: (1, 1, d) | (1, d) | (d) with d ≤ state_dim_pad, or undefined (no state encoder run);
  // embodiment: 0 … num_embodiments − 1.
  AdapterOutputs forward(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                         int embodiment);
  // Drops the per-call outputs and taps; never the persistent K/V (the adapter keeps them).
  void free_outputs(AdapterOutputs& out);
  // Frees the persistent K/V buffers; forward afterwards is an InvalidArgument.
  void release();
  // Cross K/V projections run so far (one per cross block per forward).
  int64_t hoist_projections() const;
  std::string describe() const;

  struct Impl;

 private:
  VlAdapter() = default;
  std::unique_ptr<Impl> impl_;
};

// Seeded random adapter checkpoint at `cfg`'s dims with the Isaac-GR00T key names (uniform
// ±1/sqrt(fan_in) weights, LayerNorm γ ≈ 1, β ≈ 0), as tools/make_gr00t_checkpoint.py writes.
std::map<std::string, Tensor> make_random_checkpoint(
    const Config& cfg, uint64_t seed, const std::string& prefix = default_weight_prefix());

}  // namespace meshnn::gr00t
