// libFuzzer target: a BigVGAN config.json → strict JSON → parse_bigvgan_config. A meshnn::Error is
// the expected outcome for bad input; any other exception or crash is a bug. A config that parses
// must have positive rates and sizes and a rate product equal to hop_size.
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
    const meshnn::models::BigVganConfig c = meshnn::models::parse_bigvgan_config(j, "fuzz");
    if (c.generator.sampling_rate <= 0 || c.hop_size <= 0 || c.n_fft <= 0 || c.num_mels <= 0)
      std::abort();
    if (c.generator.hop() != c.hop_size) std::abort();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
