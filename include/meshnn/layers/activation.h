// Snake / SnakeBeta and BigVGAN's anti-aliased activation (`Activation1d`) on channels-last audio
// activations (B, T, C) f32.
//
// Checkpoint names (NVIDIA BigVGAN / ltx-core, under the activation's prefix):
//   act.alpha, act.beta            (C,)        log-scale when `alpha_logscale` (every released
//   config) upsample.filter                (1, 1, 12)  optional: computed when absent
//   downsample.lowpass.filter      (1, 1, 12)  optional (diffusers: downsample.filter)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::layers {

enum class SnakeKind { snake, snake_beta };

// Runtime per-channel parameters: α and inv = 1/(β + 1e-9) (Snake: 1/(α + 1e-9)), both in f32 as
// torch computes them, exponentiated first when log-scale. Padded to `channel_align` channels with
// α = 0 and β = 1, so padded channels map x → x and stay zero if they were zero.
struct SnakeParams {
  SnakeKind kind = SnakeKind::snake_beta;
  int64_t channels = 0;      // real channels
  std::vector<float> alpha;  // (C_aligned,)
  std::vector<float> inv;    // (C_aligned,)
  int64_t aligned() const { return static_cast<int64_t>(alpha.size()); }
};

// alpha, beta: (C,) checkpoint tensors (beta ignored / may be null for Snake). `what` names the
// layer.
SnakeParams make_snake_params(SnakeKind kind, const Tensor& alpha, const Tensor* beta,
                              bool alpha_logscale, int64_t channels, int64_t channel_align,
                              const std::string& what);

// Plain Snake / SnakeBeta (no resampling). x: (B, T, C_aligned) → (B, T, C_aligned).
Tensor snake_forward(const Tensor& x, const SnakeParams& p, bool force_scalar = false);

class AntiAliasedActivation {
 public:
  // name: for error messages (e.g. "resblocks.0.activations.3"). channels: real channel count;
  // the activation works on (B, T, aligned_channels(channels, channel_align)).
  AntiAliasedActivation(std::string name, int64_t channels, SnakeKind kind, bool alpha_logscale,
                        int64_t channel_align = 1);

  // The tensors under `prefix` (ending in '.'): act.alpha (C), act.beta (C) for SnakeBeta, and
  // when `with_filters` the two (1, 1, 12) kaiser filters (optional: computed when absent).
  static std::map<std::string, Shape> tensor_names(const std::string& prefix, int64_t channels,
                                                   SnakeKind kind, bool with_filters);
  // Loads `prefix` + "act.alpha" (+ "act.beta" for SnakeBeta) and, when present, the two filter
  // buffers. Missing / misshaped keys → WeightError naming the key.
  void load_state_dict(const std::map<std::string, Tensor>& sd, const std::string& prefix);
  // Raw checkpoint values (log-scale if alpha_logscale); beta may be null for Snake.
  void set_parameters(const Tensor& alpha, const Tensor* beta);

  // Rows of real neighbour data each side that one output row depends on (±5 for r = 2, K = 12).
  static constexpr int64_t context_rows() { return 5; }

  // Fused kernel, whole sequence with replicate edges. x: (B, T, C) → (B, T, C), T ≥ 1.
  Tensor forward(const Tensor& x) const;
  void forward_into(const Tensor& x, Tensor& out) const;  // out: (B, T, C), preallocated

  // Time-shard form. slab: (B, left_ctx + n + right_ctx, C) whose interior rows are global rows
  // [global_row0, global_row0 + n) of a sequence with `global_T` real rows; the context rows are
  // real neighbour rows (halo). Needs left_ctx ≥ min(context_rows(), global_row0) and right_ctx ≥
  // min(context_rows(), global_T − global_row0 − n). Output: (B, n, C), equal bit for bit to rows
  // [global_row0, global_row0 + n) of forward() on the whole sequence; rows at global index ≥
  // global_T (the t-pad tail) are finite but unspecified — mask them with ops::set_tpad_tail.
  Tensor forward_padded(const Tensor& slab, int64_t left_ctx, int64_t right_ctx,
                        int64_t global_row0, int64_t global_T) const;
  void forward_padded_into(const Tensor& slab, int64_t left_ctx, int64_t right_ctx,
                           int64_t global_row0, int64_t global_T, Tensor& out) const;

  // The unfused op chain and the scalar kernel path, the tests' references: tests/support.

  const SnakeParams& params() const { return params_; }
  const std::vector<float>& up_taps() const { return up_; }
  const std::vector<float>& down_taps() const { return down_; }
  const std::string& name() const { return name_; }
  int64_t channels() const { return params_.aligned(); }

 private:
  void check_input(const Tensor& x, const char* fn) const;
  void run(const Tensor& slab, int64_t left_ctx, int64_t n, int64_t lo, int64_t hi,
           Tensor& out) const;

  std::string name_;
  int64_t channels_;
  int64_t channel_align_;
  bool logscale_;
  bool loaded_ = false;
  SnakeParams params_;
  std::vector<float> up_, down_;
};

}  // namespace meshnn::layers
