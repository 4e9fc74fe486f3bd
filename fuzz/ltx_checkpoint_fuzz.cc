// libFuzzer target: a checkpoint against its config (models/common/checkpoint_check.h). Input: JSON
// {"config": <LTX config>, "tensors": {"key": [dims…], …}} — the config and the key / shape table
// a safetensors header would give. Parses the config, checks the table, and builds both error
// messages. A meshnn::Error is the expected outcome for bad input; any other exception or crash
// is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"
#include "models/common/audio_config.h"
#include "models/common/checkpoint_check.h"
#include "models/ltx/weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshnn;
  static const bool quiet = [] {
    set_log_level(LogLevel::off);  // the allowed-unused warning would flood the output
    return true;
  }();
  (void)quiet;
  try {
    const auto j =
        io::parse_config_json(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    if (!j.is_object() || !j.contains("config") || !j.contains("tensors") ||
        !j.at("tensors").is_object())
      return 0;
    const models::LtxAudioConfig cfg = models::parse_ltx_audio_config(j.at("config"), "fuzz");
    std::map<std::string, Shape> shapes;
    for (auto it = j.at("tensors").begin(); it != j.at("tensors").end(); ++it) {
      if (!it.value().is_array() || it.value().size() > 8) return 0;
      Shape s;
      for (const auto& d : it.value()) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0) return 0;
        s.push_back(d.get<int64_t>());
      }
      shapes[it.key()] = s;
    }
    const models::CheckpointReport r = models::check_ltx_checkpoint(cfg, shapes);
    models::CheckpointCheckOptions allow;
    allow.allow_unused_audio_tensors = true;
    if (r.problems(allow) > r.problems({})) std::abort();
    for (const auto& opt : {models::CheckpointCheckOptions{}, allow}) {
      try {
        models::require_ltx_checkpoint(cfg, shapes, opt, "fuzz");
        if (r.problems(opt) != 0) std::abort();  // passed despite problems
      } catch (const WeightError&) {
        if (r.problems(opt) == 0) std::abort();  // failed without problems
      }
    }
  } catch (const meshnn::Error&) {
  }
  return 0;
}
