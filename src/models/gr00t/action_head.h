// GR00T N1.5 / N1.6 / N1.7 action head after the VL adapter: flow matching to an action chunk.
//
//   x_0 = noise (1, T, A)                                   (given, or seeded)
//   for k in 0 … K−1:  t = int(k / K · buckets)             (K = 4: 0, 250, 500, 750)
//     a   = ActionEncoder_e(x_k, t) + pos[0:T]              (1, T, D)
//     h   = [state_features | future tokens (N1.5) | a]     (1, N, D), N = 1 + F + T
//     y   = DiT(h, temb(t), cross K/V of the adapter)       (1, N, O)
//     v_k = ActionDecoder_e(y)[-T:]                         (1, T, A)
//     x_{k+1} = x_k + v_k / K
//   → x_K (1, T, A) in the model's normalised action space.
//
// DiT block i (i odd: self-attention; even: cross-attention to the VL key set of the version):
//   m = norm1.linear(SiLU(temb)) → scale, shift;  x = LN(h)·(1 + scale) + shift
//   h += to_out(attention(to_q(x), K, V));  h += FF(LN(h))
// Output: proj_out_1(SiLU(temb)) → shift, scale; y = proj_out_2(LN_1e-6(h)·(1 + scale) + shift).
// Cross K/V are the adapter's hoisted buffers: computed once per observation, read by every
// step. Everything that depends on the timestep only (temb, every block's scale / shift, the
// output modulation, the action encoder's time term) is computed once per bucket and cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/gr00t_config.h"
#include "models/gr00t/adapter.h"

namespace meshnn {
class Device;
}

namespace meshnn::gr00t {

// Counters of the work done since construction (tests assert that no cross K/V is projected by
// the head and that per-step work scales with the steps).
struct ActionHeadStats {
  int64_t get_action_calls = 0;
  int64_t steps = 0;          // DiT evaluations
  int64_t q_projections = 0;  // to_q products (one per block per step)
  int64_t self_kv_projections = 0;
  int64_t cross_kv_projections = 0;       // always 0: cross K/V come from the adapter
  int64_t timestep_buckets_computed = 0;  // t-only vectors (cached per bucket)
};

class ActionHead {
 public:
  // Loads the weights under `prefix` (every missing or misshaped key is listed in one
  // WeightError), packs the DiT once and each embodiment's encoder / decoder on its first use.
  // device: head-parallel over options.mesh_axis (SPMD, as VlAdapter); null: one device.
  ActionHead(const Config& cfg, const ActionHeadConfig& hc, const WeightLookup& weights,
             const ActionHeadOptions& options = {},
             const std::string& prefix = default_weight_prefix(), Device* device = nullptr);
  ~ActionHead();
  ActionHead(const ActionHead&) = delete;
  ActionHead& operator=(const ActionHead&) = delete;

  // adapter: outputs of VlAdapter::forward for this observation (kv, state_features) and its
  //   plan (key sets and their valid rows); built on the same device / axis.
  // noise: (1, T, A) | (T, A) f32, finite; embodiment 0 … E−1; steps ≥ 1 (0 = the config's).
  // velocities: when non-null, receives each step's velocity (1, T, A).
  // → actions (1, T, A) f32.
  Tensor get_action(const AdapterOutputs& adapter, const AdapterPlan& plan, const Tensor& noise,
                    int embodiment, int steps = 0, std::vector<Tensor>* velocities = nullptr);

  // Another runner over the same weights (see VlAdapter::fork; a head-parallel head's fork keeps
  // its slice and its device: bind it before running it on another launch).
  std::unique_ptr<ActionHead> fork() const;
  // Head-parallel: run on a later launch of the same mesh (see VlAdapter::bind_device).
  void bind_device(Device* device);

  // Everything the constructor checks before packing (dims, the head split over `tp` devices,
  // every key and shape, all problems in one WeightError); no weight is converted or packed.
  static void validate(const Config& cfg, const ActionHeadConfig& hc, const WeightLookup& weights,
                       const std::string& prefix = default_weight_prefix(), int tp = 1);

  const ActionHeadConfig& head_config() const;
  const ActionHeadStats& stats() const;
  std::string describe() const;  // JSON

  struct Impl;

 private:
  ActionHead() = default;
  std::unique_ptr<Impl> impl_;
};

// Seeded random whole-head checkpoint (adapter tensors of make_random_checkpoint, then every
// action-head tensor uniform ±1/sqrt(fan_in), biases ±0.02), Isaac-GR00T names.
std::map<std::string, Tensor> make_random_head_checkpoint(
    const Config& cfg, const ActionHeadConfig& hc, uint64_t seed,
    const std::string& prefix = default_weight_prefix());

// Standard-normal noise (1, T, A) from meshnn's own seeded generator (not torch's stream).
Tensor seeded_noise(int64_t horizon, int64_t action_dim, uint64_t seed);

// One runner of the policy (the building block of gr00t::Policy in meshnn/gr00t.h, which loads a
// checkpoint, pools these runners and launches the mesh): one thread at a time.
class PolicyRunner {
 public:
  PolicyRunner(const Config& cfg, const ActionHeadConfig& hc, const SlotLayout& layout,
               const WeightLookup& weights, const PolicyOptions& options = {},
               const std::string& prefix = default_weight_prefix(), Device* device = nullptr);
  ~PolicyRunner();
  // features: (1, 1, S_pad, D) slot layout (or (1, S, D) token rows, laid out here), finite;
  // state: (1, 1, d) | (1, d) | (d), d ≤ state_dim_pad, finite; noise: (1, T, A) finite, or
  // undefined to draw seeded_noise(seed). → actions (1, T, A).
  Tensor get_action(const Tensor& features, const Tensor& state, int embodiment,
                    const Tensor& noise, uint64_t seed = 0, int steps = 0,
                    std::vector<Tensor>* velocities = nullptr);
  // The same with the VL-SA key-valid mask of this call (VlAdapter::forward's vl_mask);
  // undefined = the layout's (required by versions with VL-SA, forbidden by N1.6).
  Tensor get_action(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                    int embodiment, const Tensor& noise, uint64_t seed = 0, int steps = 0,
                    std::vector<Tensor>* velocities = nullptr);
  // Another runner of the policy for another thread: weights shared, plans, scratch and K/V
  // buffers its own. Runners of one policy may run concurrently, one per thread. A head-parallel
  // runner's fork keeps its slice and device: bind it to its own launch before running it.
  std::unique_ptr<PolicyRunner> fork() const;
  // Head-parallel: adapter and head run on `device`, a device of a later launch of the same mesh.
  void bind_device(Device* device);
  VlAdapter& adapter();
  ActionHead& head();

 private:
  PolicyRunner() = default;
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace meshnn::gr00t
