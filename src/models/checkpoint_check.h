// An LTX audio checkpoint against its config, before any weight is read: every tensor the decoder
// needs present with the right shape, and no tensor under the audio prefixes that no layer uses
// (such a tensor means the config and the weights disagree, e.g. a fourth vocoder stage whose
// config entry was dropped). Tensors outside the audio prefixes are other models' (a full LTX-2.3
// file also holds the video model) and always allowed, as is the audio VAE's encoder half.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"
#include "models/audio_config.h"

namespace meshnn::models {

struct CheckpointCheckOptions {
  // Unused tensors under the audio prefixes: an error by default; true lists them as a warning.
  bool allow_unused_audio_tensors = false;
};

struct CheckpointReport {
  std::vector<std::string> missing;      // "'key' (shape)"
  std::vector<std::string> wrong_shape;  // "'key' has shape …, expected …"
  std::vector<std::string> unused;       // audio-prefix keys no layer reads
  // Problems that fail the check under `opt` (unused only when not allowed).
  size_t problems(const CheckpointCheckOptions& opt) const {
    return missing.size() + wrong_shape.size() +
           (opt.allow_unused_audio_tensors ? 0 : unused.size());
  }
};

// Appends "\n  <n> <title>:" and the first 25 items (then "… and <k> more") to msg: how every
// checkpoint check lists its problems.
void append_problem_list(std::string& msg, const char* title,
                         const std::vector<std::string>& items);

// tensors: every key of the file and its shape.
CheckpointReport check_ltx_checkpoint(const LtxAudioConfig& cfg,
                                      const std::map<std::string, Shape>& tensors);
// Throws WeightError listing every problem (the first 25 of each kind) when problems(opt) > 0;
// with allowed unused tensors, logs them as a warning instead. `where` names the file.
void require_ltx_checkpoint(const LtxAudioConfig& cfg, const std::map<std::string, Shape>& tensors,
                            const CheckpointCheckOptions& opt, const std::string& where);

}  // namespace meshnn::models
