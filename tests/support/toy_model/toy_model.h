// The toy audio VAE registered from tests/support (toy_model/entry.cc): its registry name, and
// the registry's entries that ship with meshnn (every registered one but the toy).
#pragma once

#include <string>
#include <vector>

namespace meshnn::test::toy {

constexpr const char* kRegistryName = "toy-audio-vae";

// AudioModel::registered() without the toy: the built-in families, in load order.
std::vector<std::string> builtin_models();

}  // namespace meshnn::test::toy
