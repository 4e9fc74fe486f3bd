// The MiniMax-H3 audio VAE's checkpoint keys (diffusers' module tree) and the all-at-once check of
// a file against a config: every problem (missing, misshaped, unknown, unsupported dtype, a weight
// norm half without its other half) is collected and reported together.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"
#include "models/minimax_h3/config.h"

namespace meshnn::models::minimax_h3 {

// Which halves of the model a caller builds (the check always covers the whole file).
enum class Parts { decoder = 1, encoder = 2, both = 3 };
inline bool has(Parts p, Parts q) { return (static_cast<int>(p) & static_cast<int>(q)) != 0; }

// The checkpoint keys, spelled only here (weights.cc): layer prefixes without a trailing '.'; the
// layers add their own tensor names (weight / bias, state_dict.h). i = encoder stage 1 … n, u =
// residual unit 0 … 2.
namespace keys {
std::string conv_in();                        // encoder.block.0 (conv 1 → encoder_dim, k7)
std::string unit_alpha(int i, int u, int j);  // Snake1d α before conv j = 0 (k7) / 1 (k1)
std::string unit_conv(int i, int u, int j);   // conv j = 0 (k7, dilated) / 1 (k1)
std::string stage_alpha(int i);               // the Snake1d before the strided conv
std::string stage_conv(int i);                // the strided conv (k = 2s, pad ⌈s/2⌉)
std::string final_alpha(const Config& cfg);
std::string conv_out(const Config& cfg);  // the final k3 conv
std::string mean_proj();
std::string logs_proj();
std::string dec_in_proj();
std::string decoder();    // the generator's key prefix, with its '.'
std::string pre_block();  // the attention projection's key prefix, with its '.'
// Under pre_block():
std::string norm1();
std::string norm2();
std::string norm3();
std::string mlp_norm();
std::string qkv();  // Linear without bias
std::string q_bias();
std::string zero_k_bias();
std::string v_bias();
std::string attn_proj();
std::string proj();
std::string mlp_w(int j);  // j = 0 (GELU side), 1, 2 (out)
}  // namespace keys

// Every tensor of the model in its folded spelling (a weight-normed conv as `<prefix>.weight`),
// key → shape: encoder.*, pre_block.*, mean_proj.*, logs_proj.*, dec_in_proj.*, decoder.* (the
// BigVGAN generator's keys, filter buffers included).
std::map<std::string, Shape> expected_tensors(const Config& cfg);

struct TensorInfo {
  Shape shape;
  DType dtype = DType::f32;
};
// The shapes go through the one checkpoint check of every model (checkpoint_check.h); the dtypes
// are checked here.

// All problems of `tensors` (every key of the file) against `cfg`, one line each; empty = valid.
// Weight norm may be stored unfolded (`weight_g` + `weight_v`, or the parametrisation spelling
// `parametrizations.weight.original0/1`) or folded (`weight`); tensors may be f32, bf16 or f16.
std::vector<std::string> check_tensors(const Config& cfg,
                                       const std::map<std::string, TensorInfo>& tensors);
// Throws WeightError listing every problem (the first 25) when there are any. `where` names the
// file.
void require_tensors(const Config& cfg, const std::map<std::string, TensorInfo>& tensors,
                     const std::string& where);

}  // namespace meshnn::models::minimax_h3
