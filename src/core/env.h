// Every MESHNN_* environment switch, read here and nowhere else (the README lists them). Each is
// read when asked for, so a benchmark may change one between builds of a model.
#pragma once

#include <optional>
#include <string>

#include "core/enum_names.h"

namespace meshnn {

enum class EnvSwitch {
  log,             // MESHNN_LOG: off | error | warn | info | debug
  profile,         // MESHNN_PROFILE: 1 prints wall time per op kind at exit, layers also per layer
  alloc_cache_mb,  // MESHNN_ALLOC_CACHE_MB: size of the reused-allocation cache
  comm_timeout,    // MESHNN_COMM_TIMEOUT: seconds without progress before CommError (0 = none)
  conv_algo,       // MESHNN_CONV_ALGO: auto | direct | winograd | fft | onednn
  conv_direct,     // MESHNN_CONV_DIRECT: 0 = the same as MESHNN_CONV_ALGO=onednn (older switch)
  conv_fold,       // MESHNN_CONV_FOLD: 0 turns off dilation folding in oneDNN convolutions
  deconv_algo,     // MESHNN_DECONV_ALGO: auto | polyphase | onednn (ConvTranspose1d)
  link,            // MESHNN_LINK: the link --mesh auto assumes on the mpi backend (scale_rule.h)
  filter_cache,    // MESHNN_FILTER_CACHE: folder of the transformed-filter cache, or off
  filter_cache_min_kb,  // MESHNN_FILTER_CACHE_MIN_KB: the smallest layer cached (KiB, default 64)
  filter_memory,        // MESHNN_FILTER_MEMORY: mapped | private | background (filter_memory.h)
};

// The variable's name, e.g. "MESHNN_CONV_ALGO".
const char* env_name(EnvSwitch s);
// Its value when set and not empty.
std::optional<std::string> env_value(EnvSwitch s);
// Its value as one of `names` (nullopt when unset); InvalidArgument "MESHNN_X=v: expected a, b or
// c" otherwise.
template <class E, std::size_t N>
std::optional<E> env_choice(EnvSwitch s, const EnumNames<E, N>& names) {
  const auto v = env_value(s);
  if (!v) return std::nullopt;
  if (const auto e = names.find(*v)) return e;
  throw InvalidArgument(detail::concat(env_name(s), "=", *v, ": expected ", names.list_text()));
}

}  // namespace meshnn
