#include "core/env.h"

#include <cstdlib>

namespace meshnn {

const char* env_name(EnvSwitch s) {
  switch (s) {
    case EnvSwitch::log:
      return "MESHNN_LOG";
    case EnvSwitch::profile:
      return "MESHNN_PROFILE";
    case EnvSwitch::alloc_cache_mb:
      return "MESHNN_ALLOC_CACHE_MB";
    case EnvSwitch::comm_timeout:
      return "MESHNN_COMM_TIMEOUT";
    case EnvSwitch::conv_algo:
      return "MESHNN_CONV_ALGO";
    case EnvSwitch::conv_direct:
      return "MESHNN_CONV_DIRECT";
    case EnvSwitch::conv_fold:
      return "MESHNN_CONV_FOLD";
    case EnvSwitch::deconv_algo:
      return "MESHNN_DECONV_ALGO";
    case EnvSwitch::link:
      return "MESHNN_LINK";
  }
  return "";
}

std::optional<std::string> env_value(EnvSwitch s) {
  const char* v = std::getenv(env_name(s));
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace meshnn
