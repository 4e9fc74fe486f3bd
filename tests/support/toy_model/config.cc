#include "support/toy_model/config.h"

#include "io/config_reader.h"
#include "meshnn/core/error.h"

namespace meshnn::test::toy {

namespace {

int64_t bounded(io::ConfigReader& r, const char* key, int64_t lo, int64_t hi) {
  const int64_t v = r.get<int64_t>(key);
  MESHNN_CHECK_AS(InvalidArgument, v >= lo && v <= hi, r.where(), ": config field '", key,
                  "' must be in [", lo, ", ", hi, "], got ", v);
  return v;
}

}  // namespace

Config parse_config(const nlohmann::json& j, const std::string& where) {
  io::ConfigReader r(j, where);
  r.require_eq("_class_name", kClassName);
  Config c;
  c.sampling_rate = static_cast<int>(bounded(r, "sampling_rate", 1000, 192000));
  c.latent_channels = bounded(r, "latent_channels", 1, 64);
  c.hidden_channels = bounded(r, "hidden_channels", 1, 64);
  c.hop = bounded(r, "hop", 2, 64);
  // The strided encoder conv (k = 2·hop, pad hop/2) gives exactly n/hop frames for an even hop.
  MESHNN_CHECK_AS(InvalidArgument, c.hop % 2 == 0, where, ": config field 'hop' must be even, got ",
                  c.hop);
  r.finish();
  return c;
}

std::string config_json(const Config& cfg) {
  nlohmann::json j;
  j["_class_name"] = kClassName;
  j["sampling_rate"] = cfg.sampling_rate;
  j["latent_channels"] = cfg.latent_channels;
  j["hidden_channels"] = cfg.hidden_channels;
  j["hop"] = cfg.hop;
  return j.dump(2);
}

}  // namespace meshnn::test::toy
