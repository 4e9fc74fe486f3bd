#include "core/env.h"

#include <cstdlib>

#include "core/enum_names.h"

namespace meshnn {

namespace {
constexpr EnumNames<EnvSwitch, 12> kEnvNames{
    "environment switch",
    {{EnvSwitch::log, "MESHNN_LOG"},
     {EnvSwitch::profile, "MESHNN_PROFILE"},
     {EnvSwitch::alloc_cache_mb, "MESHNN_ALLOC_CACHE_MB"},
     {EnvSwitch::comm_timeout, "MESHNN_COMM_TIMEOUT"},
     {EnvSwitch::conv_algo, "MESHNN_CONV_ALGO"},
     {EnvSwitch::conv_direct, "MESHNN_CONV_DIRECT"},
     {EnvSwitch::conv_fold, "MESHNN_CONV_FOLD"},
     {EnvSwitch::deconv_algo, "MESHNN_DECONV_ALGO"},
     {EnvSwitch::link, "MESHNN_LINK"},
     {EnvSwitch::filter_cache, "MESHNN_FILTER_CACHE"},
     {EnvSwitch::filter_cache_min_kb, "MESHNN_FILTER_CACHE_MIN_KB"},
     {EnvSwitch::filter_memory, "MESHNN_FILTER_MEMORY"}}};
}  // namespace

const char* env_name(EnvSwitch s) { return kEnvNames.name(s, ""); }

std::optional<std::string> env_value(EnvSwitch s) {
  const char* v = std::getenv(env_name(s));
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace meshnn
