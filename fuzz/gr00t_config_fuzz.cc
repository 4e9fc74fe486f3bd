// libFuzzer target: GR00T config JSON (the --config file / checkpoint `config` metadata) →
// gr00t::Config::from_json and gr00t::ActionHeadConfig::from_json, for the version chosen by the
// first byte. A meshnn::Error is the expected outcome for bad input; any other exception or crash
// is a bug, and so is an accepted head config outside its documented bounds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  using meshnn::gr00t::Version;
  const Version versions[] = {Version::n1_5, Version::n1_6, Version::n1_7};
  const Version v = versions[data[0] % 3];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    const auto c = meshnn::gr00t::Config::from_json(text, v);
    (void)c;
  } catch (const meshnn::Error&) {
  }
  try {
    const auto h = meshnn::gr00t::ActionHeadConfig::from_json(text, v);
    if (h.action_dim < 1 || h.action_horizon < 1 || h.action_horizon > h.max_seq_len ||
        h.num_steps < 1 || h.num_steps > h.num_buckets || h.future_tokens < 0)
      __builtin_trap();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
