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

// Every tensor of the model in its folded spelling (a weight-normed conv as `<prefix>.weight`),
// key → shape: encoder.*, pre_block.*, mean_proj.*, logs_proj.*, dec_in_proj.*, decoder.* (the
// BigVGAN generator's keys, filter buffers included).
std::map<std::string, Shape> expected_tensors(const Config& cfg);

struct TensorInfo {
  Shape shape;
  DType dtype = DType::f32;
};

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
