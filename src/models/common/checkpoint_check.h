// An LTX audio checkpoint against its config, before any weight is read: every tensor the decoder
// needs present with the right shape, and no tensor under the audio prefixes that no layer uses
// (such a tensor means the config and the weights disagree, e.g. a fourth vocoder stage whose
// config entry was dropped). Tensors outside the audio prefixes are other models' (a full LTX-2.3
// file also holds the video model) and always allowed, as is the audio VAE's encoder half.
//
// The check itself is one function for every model (check_tensor_set): a file's tensors against
// the tensors a model's description reads, every problem collected and reported together.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"
#include "models/common/audio_config.h"

namespace meshnn::models {

// What a model reads of a file, and how to treat the file's other keys.
struct TensorSetRules {
  // Keys the model owns (a key it does not read there is "unknown"); null = every key. Keys
  // outside are another model's (a full LTX-2.3 file's video model) or test goldens.
  std::function<bool(const std::string&)> ours;
  // Keys the model reads that may be absent (the loader has a default).
  std::function<bool(const std::string&)> optional;
};

struct TensorSetReport {
  std::vector<std::string> missing;      // "'key' (shape)"
  std::vector<std::string> wrong_shape;  // "'key' has shape …, expected …"
  std::vector<std::string> unknown;      // keys under `ours` that the model does not read
  std::vector<std::string> invalid;      // a weight-norm half without its other half, …
};

// expected: every tensor the model reads, in its folded spelling (a weight-normed conv as
// `<prefix>.weight`) → shape; tensors: every key of the file → shape. The file's weight norm may
// be stored unfolded (`weight_g` + `weight_v`, or `parametrizations.weight.original0/1`, g of
// shape (D0, 1, …, 1) or (D0)), as the loaders accept it (layers/state_dict.h).
TensorSetReport check_tensor_set(const std::map<std::string, Shape>& expected,
                                 const std::map<std::string, Shape>& tensors,
                                 const TensorSetRules& rules = {});

struct CheckpointCheckOptions {
  // Unused tensors under the audio prefixes: an error by default; true lists them as a warning.
  bool allow_unused_audio_tensors = false;
};

struct CheckpointReport {
  std::vector<std::string> missing;      // "'key' (shape)"
  std::vector<std::string> wrong_shape;  // "'key' has shape …, expected …"
  std::vector<std::string> unused;       // audio-prefix keys no layer reads
  std::vector<std::string> invalid;      // a weight-norm half without its other half, …
  // Problems that fail the check under `opt` (unused only when not allowed).
  size_t problems(const CheckpointCheckOptions& opt) const {
    return missing.size() + wrong_shape.size() + invalid.size() +
           (opt.allow_unused_audio_tensors ? 0 : unused.size());
  }
};

// Appends "\n  <n> <title>:" and the first 25 items (then "… and <k> more") to msg: how every
// checkpoint check lists its problems.
void append_problem_list(std::string& msg, const char* title,
                         const std::vector<std::string>& items);

// An NVIDIA BigVGAN generator file, its keys under `prefix` ("" or "generator.", as
// nvidia_generator_prefix finds it): every missing, misshaped or unused generator tensor (conv_pre,
// ups, resblocks, activation_post, conv_post) reported at once; the anti-aliasing filters may be
// absent (the layer computes them), other keys are not the generator's. Throws WeightError naming
// `where`.
void require_bigvgan_checkpoint(const GeneratorConfig& cfg, const std::string& prefix,
                                const std::map<std::string, Shape>& tensors,
                                const std::string& where);

}  // namespace meshnn::models
