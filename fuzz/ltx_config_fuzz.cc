// libFuzzer target: an LTX checkpoint's `config` metadata text → strict JSON (duplicate keys,
// big integers) → parse_ltx_audio_config. A meshnn::Error is the expected outcome for bad input;
// any other exception or crash is a bug. A config that parses must satisfy the invariants the
// decoder relies on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "models/common/audio_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto j = meshnn::io::parse_config_json(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    const meshnn::models::LtxAudioConfig c = meshnn::models::parse_ltx_audio_config(j, "fuzz");
    if (c.vocoder.hop() <= 0 || c.vae.latent_mel_bins <= 0 || c.output_sampling_rate() <= 0)
      std::abort();
    if (c.vae.out_ch * c.vae.mel_bins != c.vocoder.in_channels) std::abort();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
