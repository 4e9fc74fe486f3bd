// Seeded random LTX audio checkpoints at the real architecture, with the real key names, built in
// memory (the demo, tests, benchmarks). Scales follow tools/ltx_audio/randinit.py so activations
// stay in a sane range through the chain; STFT / mel bases are the real fixed shapes (DFT rows
// times a periodic Hann window, Slaney mel), and every value is bf16-representable like the real
// files.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "meshnn/core/tensor.h"
#include "models/common/audio_config.h"

namespace meshnn::models {

std::map<std::string, Tensor> random_ltx_state(const LtxAudioConfig& cfg, uint64_t seed);

// The seeded LTX-2.3 checkpoint (ltx23_reference_config, random_ltx_state) written to `path` as a
// safetensors file like the published ones: bf16 tensors (the seeded values are bf16-exact, so
// loading it gives AudioModel::random's weights) and the `config` metadata. For benchmarks that
// hand the same weights to PyTorch.
void save_random_ltx23(const std::string& path, uint64_t seed);
}  // namespace meshnn::models
