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

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "meshnn/gr00t_config.h"
#include "meshnn/layers/state_dict.h"

namespace meshnn {
class Device;
}

namespace meshnn::gr00t {

// The adapter's plan: cross-checks config, layout, options and (when given) the checkpoint's
// keys and shapes; throws InvalidArgument / WeightError naming the field or key. No compute
// happens here. tp / tp_rank: the head-parallel split (AdapterPlan::tp).
AdapterPlan build_adapter_plan(const Config& cfg, const SlotLayout& layout,
                               const AdapterOptions& options, const WeightLookup* weights = nullptr,
                               const std::string& weight_prefix = default_weight_prefix(),
                               int tp = 1, int tp_rank = 0);

// Finds the prefix under which `action_head.vlln.weight` lives (LeRobot copies add one), e.g.
// "action_head." or "_groot_model.action_head."; WeightError listing a few keys when absent.
std::string detect_weight_prefix(const std::vector<std::string>& keys);

// The state encoder's input block: state (1, 1, D) | (1, D) | (D) f32, D ≤ d_pad, all finite →
// (1, 1, rows, d_pad) with row 0 = the state zero-padded, rows 1 … rows−1 zero (a
// 32-row block). InvalidArgument naming `state` otherwise.
Tensor state_rows(const Tensor& state, int64_t d_pad, int64_t rows = 32);

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
