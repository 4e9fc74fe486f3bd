// The GR00T policy: seeded noise and PolicyRunner (the VL adapter, then the action head).
#include <cmath>
#include <random>

#include "meshnn/core/error.h"
#include "models/gr00t/action_head_impl.h"

namespace meshnn::gr00t {

using head_detail::all_finite;

Tensor seeded_noise(int64_t horizon, int64_t action_dim, uint64_t seed) {
  // Box–Muller over mt19937_64 (the same numbers on every standard library, unlike
  // std::normal_distribution).
  std::mt19937_64 rng(seed);
  auto uniform = [&rng] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; };
  Tensor n({1, horizon, action_dim});
  float* d = n.data<float>();
  for (int64_t i = 0; i < n.numel(); i += 2) {
    const double r = std::sqrt(-2.0 * std::log(uniform())), a = 2.0 * M_PI * uniform();
    d[i] = static_cast<float>(r * std::cos(a));
    if (i + 1 < n.numel()) d[i + 1] = static_cast<float>(r * std::sin(a));
  }
  return n;
}

// make_random_head_checkpoint: models/gr00t/description.cc (from the key table).

struct PolicyRunner::State {
  Config cfg;
  ActionHeadConfig hc;
  SlotLayout layout;
  std::unique_ptr<VlAdapter> adapter;
  std::unique_ptr<ActionHead> head;
};

PolicyRunner::PolicyRunner(const Config& cfg, const ActionHeadConfig& hc, const SlotLayout& layout,
                           const WeightLookup& weights, const PolicyOptions& options,
                           const std::string& prefix, Device* device)
    : s_(std::make_unique<State>()) {
  s_->cfg = cfg;
  s_->hc = hc;
  s_->layout = layout;
  ActionHeadOptions ho = options.head;
  ho.mesh_axis = options.adapter.mesh_axis;
  // Head first: its key check lists every missing tensor of the head at once.
  s_->head = std::make_unique<ActionHead>(cfg, hc, weights, ho, prefix, device);
  s_->adapter = std::make_unique<VlAdapter>(cfg, layout, weights, options.adapter, prefix, device);
}

PolicyRunner::~PolicyRunner() = default;
VlAdapter& PolicyRunner::adapter() { return *s_->adapter; }
ActionHead& PolicyRunner::head() { return *s_->head; }
std::unique_ptr<PolicyRunner> PolicyRunner::fork() const {
  std::unique_ptr<PolicyRunner> out(new PolicyRunner());
  out->s_ = std::make_unique<State>();
  State& f = *out->s_;
  f.cfg = s_->cfg;
  f.hc = s_->hc;
  f.layout = s_->layout;
  f.head = s_->head->fork();
  f.adapter = s_->adapter->fork();
  return out;
}

void PolicyRunner::bind_device(Device* device) {
  s_->head->bind_device(device);
  s_->adapter->bind_device(device);
}

Tensor PolicyRunner::get_action(const Tensor& features, const Tensor& state, int embodiment,
                                const Tensor& noise, uint64_t seed, int steps,
                                std::vector<Tensor>* velocities) {
  return get_action(features, Tensor(), state, embodiment, noise, seed, steps, velocities);
}

Tensor PolicyRunner::get_action(const Tensor& features, const Tensor& vl_mask, const Tensor& state,
                                int embodiment, const Tensor& noise, uint64_t seed, int steps,
                                std::vector<Tensor>* velocities) {
  State& s = *s_;
  const char* vn = version_name(s.cfg.version);
  // ---- validate everything before any compute -----------------------------------------------
  MESHNN_CHECK(features.defined(), "features are undefined");
  const int64_t D = s.cfg.backbone_embedding_dim;
  MESHNN_CHECK_AS(ShapeError, features.dim(-1) == D, vn, ": features have width ", features.dim(-1),
                  ", the checkpoint's backbone_embedding_dim is ", D);
  Tensor f = features;
  if (f.rank() != 4) {
    MESHNN_CHECK_AS(ShapeError, f.rank() >= 2 && f.dim(-2) == s.layout.seq_len(), "features ",
                    shape_str(f.shape()), " must be [1, S, ", D, "] with S = ", s.layout.seq_len(),
                    " (the token-types length)");
    f = s.layout.rows_to_slots(f.to(DType::f32));
  }
  MESHNN_CHECK(all_finite(f), "features have NaN or Inf values");
  MESHNN_CHECK(state.defined(), vn, ": the action head needs a state");
  MESHNN_CHECK(embodiment >= 0 && embodiment < s.cfg.state.num_embodiments, "embodiment id ",
               embodiment, " is out of range [0, ", s.cfg.state.num_embodiments, ")");
  // The state encoder reads max_state_dim columns; wider states would be silently cut.
  MESHNN_CHECK(state.rank() >= 1 && state.dim(-1) <= s.cfg.state.max_state_dim, vn,
               ": state width ", state.rank() ? state.dim(-1) : 0, " exceeds max_state_dim ",
               s.cfg.state.max_state_dim, " (the padded state of this checkpoint)");
  Tensor nz = noise.defined() ? noise : seeded_noise(s.hc.action_horizon, s.hc.action_dim, seed);
  MESHNN_CHECK_AS(ShapeError,
                  (nz.rank() == 2 || (nz.rank() == 3 && nz.dim(0) == 1)) &&
                      nz.dim(-2) == s.hc.action_horizon && nz.dim(-1) == s.hc.action_dim,
                  "noise must be [1, ", s.hc.action_horizon, ", ", s.hc.action_dim, "], got ",
                  shape_str(nz.shape()));
  MESHNN_CHECK(all_finite(nz), "noise has NaN or Inf values");
  for (const std::string& ks : {std::string("text"), std::string("image")}) {
    bool used = false;
    for (int b : s.cfg.dit.cross_block_indices()) used = used || s.cfg.dit.key_set(b) == ks;
    if (used)
      MESHNN_CHECK(s.layout.key_set_lengths(ks).first > 0, vn, ": no ", ks,
                   " tokens in the token types; the ", ks,
                   " cross-attention blocks would attend nothing");
  }
  // state: width, finiteness checked by the adapter before its compute (state_rows).
  // vl_mask: shape, 0 / 1 values and presence checked by the adapter before its compute.
  const Tensor mask = vl_mask.defined()                   ? vl_mask
                      : s.adapter->plan().vl_mask_present ? s.layout.key_valid_mask()
                                                          : Tensor();
  AdapterOutputs out = s.adapter->forward(f, mask, state, embodiment);
  Tensor actions = s.head->get_action(out, s.adapter->plan(), nz, embodiment, steps, velocities);
  s.adapter->free_outputs(out);
  return actions;
}

}  // namespace meshnn::gr00t
