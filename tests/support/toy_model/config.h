// The toy audio VAE's config (a folder's config.json, read strictly through io/config_reader.h):
// a model registered from tests/support only, to show that a model defined outside src/models runs
// every way the runtime offers (one shot, time-sharded, streamed, encoded) with no line of its own
// in the product.
//
//   {"_class_name": "MeshnnToyAudioVae", "sampling_rate": 8000, "latent_channels": 3,
//    "hidden_channels": 4, "hop": 4}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace meshnn::test::toy {

// The class name a toy folder's config.json carries.
constexpr const char* kClassName = "MeshnnToyAudioVae";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kWeightsFile = "toy_vae.safetensors";

struct Config {
  int sampling_rate = 8000;
  int64_t latent_channels = 3;  // C
  int64_t hidden_channels = 4;  // H
  int64_t hop = 4;              // samples per latent frame: the up / down stride (even)
};

// j: the parsed config.json; `where` names the file. Unknown keys, a wrong class name, float
// literals for integers and out-of-range values are InvalidArgument naming the field.
Config parse_config(const nlohmann::json& j, const std::string& where);
// The config.json text of `cfg`.
std::string config_json(const Config& cfg);

}  // namespace meshnn::test::toy
