// Conv1d, Conv2d and ConvTranspose1d layers on channels-last activations (unsharded forms; the
// time-sharded forms are in time_shard.h), all served by one convolution engine with weights packed
// once and one plan per input shape.
//
// Activations: 1-D (B, T, C); 2-D (B, H, W, C) with H = time. f32 in, f32 out, in every precision
// mode (the mode only changes how the products are formed; see docs/precision.md).
//
// Sharded use: forward_padded() is the 'valid' conv on an input that already carries its halo
// (pad_left() rows before, pad_right() rows after), so a time shard plus its neighbours' rows gives
// exactly the unsharded result rows.
//
// Weights and threads: a copy of a layer shares its weights (converted and packed once per process)
// and owns its own plans and scratch. One forward at a time per layer instance: give each device
// thread its own copy (models copy their layers this way to make a runner per device).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/layers/state_dict.h"

namespace meshnn {

namespace conv {
class ConvEngine;
}

struct Conv1dConfig {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t kernel_size = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  // nullopt: "same" = eff_k // 2 on both sides (eff_k = (k − 1)·dilation + 1); a value: that many
  // zero rows on both sides (MiniMax DAC encoder: ceil(stride / 2)). Ignored when causal.
  std::optional<int64_t> padding;
  std::string padding_mode = "zeros";  // "zeros" | "causal" (front pad eff_k − 1, no back pad)
  bool bias = true;
  Precision precision = Precision::fp32;
};

struct Conv2dConfig {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  std::array<int64_t, 2> kernel_size{1, 1};  // (kh, kw)
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> dilation{1, 1};
  // "zeros": eff_k // 2 both sides on each axis (torch Conv2d(padding=k//2));
  // "causal_height": H front pad eff_kh − 1, W ⌊(eff_kw − 1)/2⌋ | rest (ltx_core CausalConv2d);
  // "causal_width": the same with the axes swapped.
  std::string padding_mode = "zeros";
  bool bias = true;
  Precision precision = Precision::fp32;
};

struct ConvTranspose1dConfig {
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t kernel_size = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  std::optional<int64_t> padding;  // nullopt: (k − stride) // 2 (BigVGAN / LTX upsamplers)
  int64_t output_padding = 0;
  bool bias = true;
  Precision precision = Precision::fp32;
};

// Shared machinery of the three layers (validation, engine, output allocation).
class ConvLayerBase {
 public:
  virtual ~ConvLayerBase();
  ConvLayerBase(const ConvLayerBase& other);  // shares the weights, fresh plans
  ConvLayerBase(ConvLayerBase&&) noexcept;
  ConvLayerBase& operator=(ConvLayerBase&&) noexcept;

  const std::string& name() const { return name_; }
  Precision precision() const { return precision_; }
  bool loaded() const { return engine_ != nullptr; }

  // x: (B, T, C_in) [2-D: (B, H, W, C_in)] f32 → (B, T_out, C_out) [(B, H_out, W_out, C_out)].
  Tensor forward(const Tensor& x);
  // Same, into a caller-provided dense f32 output of exactly the output shape (an arena slab).
  // accumulate: y += conv(x) (fused residual add via oneDNN's sum post-op).
  void forward_into(const Tensor& x, Tensor& y, bool accumulate = false);
  // Input already carries its time halo: a 'valid' conv along time (no time padding; the other
  // axis of a Conv2d keeps its rule). For ConvTranspose1d: no output cropping along time.
  Tensor forward_padded(const Tensor& x_with_halo);
  void forward_padded_into(const Tensor& x_with_halo, Tensor& y, bool accumulate = false);
  // Time padding the layer applies itself (conv: zero rows added; deconv: output rows cropped).
  int64_t pad_left() const { return pad_l_[0]; }
  int64_t pad_right() const { return pad_r_[0]; }
  // Output shape for an input shape (ShapeError when it does not fit); padded = forward_padded.
  Shape output_shape(const Shape& x_shape, bool padded = false) const;
  // Creates the oneDNN plan for this input shape now (pre-warm; no JIT on the first request).
  void prepare(const Shape& x_shape, bool padded = false);
  // oneDNN implementation picked for this input shape (benchmarks / logs).
  std::string impl_info(const Shape& x_shape, bool padded = false);

 protected:
  ConvLayerBase(std::string name, int spatial, int64_t c_in, int64_t c_out, Precision precision);
  // weight: PyTorch layout f32 (made only if the engine reads it); bias: (C_out) or undefined.
  // Builds the engine.
  void build(bool deconv, const std::array<int64_t, 2>& kernel,
             const std::array<int64_t, 2>& stride, const std::array<int64_t, 2>& dilation,
             bool bias, const MappedWeight& weight, const Tensor& bias_t);
  void check_loaded() const;

  std::string name_;
  int spatial_;
  int64_t c_in_, c_out_;
  Precision precision_;
  std::array<int64_t, 2> pad_l_{0, 0}, pad_r_{0, 0};
  std::unique_ptr<conv::ConvEngine> engine_;

 private:
  void run(const Tensor& x, Tensor& y, bool padded, bool accumulate);
};

class Conv1d : public ConvLayerBase {
 public:
  // Validates the config (InvalidArgument naming `name`); weights come with load / set_weights.
  explicit Conv1d(const Conv1dConfig& cfg, std::string name = "conv1d");
  // Reads <prefix>.weight / .bias in any spelling map_conv1d_state accepts.
  void load(const std::map<std::string, Tensor>& state, const std::string& prefix);
  void load(const WeightLookup& get, const std::string& prefix);
  // weight: (C_out, C_in, K) f32; bias: (C_out) f32 (undefined when cfg.bias is false).
  void set_weights(const Tensor& weight, const Tensor& bias);
  const Conv1dConfig& config() const { return cfg_; }

 private:
  Conv1dConfig cfg_;
};

class Conv2d : public ConvLayerBase {
 public:
  explicit Conv2d(const Conv2dConfig& cfg, std::string name = "conv2d");
  void load(const std::map<std::string, Tensor>& state, const std::string& prefix);
  void load(const WeightLookup& get, const std::string& prefix);
  // weight: (C_out, C_in, Kh, Kw) f32; bias: (C_out) f32.
  void set_weights(const Tensor& weight, const Tensor& bias);
  const Conv2dConfig& config() const { return cfg_; }

 private:
  Conv2dConfig cfg_;
};

class ConvTranspose1d : public ConvLayerBase {
 public:
  explicit ConvTranspose1d(const ConvTranspose1dConfig& cfg, std::string name = "conv_transpose1d");
  void load(const std::map<std::string, Tensor>& state, const std::string& prefix);
  void load(const WeightLookup& get, const std::string& prefix);
  // weight: (C_in, C_out, K) f32 exactly as torch stores it; bias: (C_out) f32.
  void set_weights(const Tensor& weight, const Tensor& bias);
  const ConvTranspose1dConfig& config() const { return cfg_; }

 private:
  ConvTranspose1dConfig cfg_;
};

}  // namespace meshnn
