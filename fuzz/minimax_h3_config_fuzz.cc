// libFuzzer target: a MiniMax-H3 config.json → strict JSON → minimax_h3::parse_config. A
// meshnn::Error is the expected outcome for bad input; any other exception or crash is a bug, and
// so is an accepted config whose decoder and encoder hops differ or whose widths overflow.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "models/minimax_h3/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto j = meshnn::io::parse_config_json(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    const meshnn::models::minimax_h3::Config c =
        meshnn::models::minimax_h3::parse_config(j, "fuzz");
    if (c.hop() < 1 || c.generator().hop() != c.hop()) std::abort();
    if (c.latent_dim % c.num_attention_heads != 0 || c.latent_dim % c.latent_channels != 0)
      std::abort();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
