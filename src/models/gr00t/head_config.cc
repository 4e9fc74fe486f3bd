// GR00T action-head config: the per-version defaults and the strict JSON reader (its own file so
// that the config fuzzer links it without the head's compute).
#include <nlohmann/json.hpp>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/config_fields.h"

namespace meshnn::gr00t {

using nlohmann::json;

// ------------------------------------------------------------------------------------------------
// config
// ------------------------------------------------------------------------------------------------

ActionHeadConfig ActionHeadConfig::defaults(Version v) {
  ActionHeadConfig c;
  switch (v) {
    case Version::n1_5:
      c.action_dim = 32, c.action_horizon = 16, c.future_tokens = 32;
      break;
    case Version::n1_6:
      c.action_dim = 128, c.action_horizon = 50, c.future_tokens = 0;
      break;
    case Version::n1_7:
      c.action_dim = 132, c.action_horizon = 40, c.future_tokens = 0;
      break;
  }
  return c;
}

namespace {

using io::ConfigReader;

// Strict, as the adapter config reader: "action_horizon": 16.7 (or 16.0) is refused, not run as
// 16, and so are duplicate and unknown keys.
ActionHeadConfig head_from_json(const json& root, Version v, const std::string& where) {
  ConfigReader rr(root, where);
  ConfigReader* nested = rr.child_if("action_head_cfg");
  ConfigReader& h = nested != nullptr ? *nested : rr;
  ActionHeadConfig c = ActionHeadConfig::defaults(v);
  h.take("max_action_dim", c.action_dim);
  h.take("action_dim", c.action_dim);
  h.take("action_horizon", c.action_horizon);
  h.take("num_target_vision_tokens", c.future_tokens);
  h.take("max_seq_len", c.max_seq_len);
  h.take("num_inference_timesteps", c.num_steps);
  h.take("num_timestep_buckets", c.num_buckets);
  allow_gr00t_fields(rr, h);
  rr.finish();
  // Only N1.5's head has future tokens (N1.6 / N1.7 configs may still carry the field).
  if (v != Version::n1_5) c.future_tokens = 0;
  MESHNN_CHECK(c.action_dim > 0 && c.action_horizon > 0 && c.future_tokens >= 0,
               "GR00T head config: action_dim ", c.action_dim, ", action_horizon ",
               c.action_horizon, ", num_target_vision_tokens ", c.future_tokens,
               " must be positive");
  MESHNN_CHECK(c.action_horizon <= c.max_seq_len, "GR00T head config: action_horizon ",
               c.action_horizon, " > max_seq_len ", c.max_seq_len, " (position-embedding rows)");
  MESHNN_CHECK(c.num_steps >= 1 && c.num_buckets >= 1 && c.num_steps <= c.num_buckets,
               "GR00T head config: num_inference_timesteps ", c.num_steps,
               " and num_timestep_buckets ", c.num_buckets,
               " must be ≥ 1, with no more steps than buckets");
  MESHNN_CHECK(c.action_dim <= (1 << 16) && c.action_horizon <= (1 << 16) &&
                   c.future_tokens <= (1 << 16) && c.max_seq_len <= (1 << 20),
               "GR00T head config: action_dim ", c.action_dim, ", action_horizon ",
               c.action_horizon, ", num_target_vision_tokens ", c.future_tokens, ", max_seq_len ",
               c.max_seq_len, ": implausibly large");
  return c;
}

}  // namespace

ActionHeadConfig ActionHeadConfig::from_json(const std::string& json_text, Version v) {
  return head_from_json(io::parse_config_json(json_text, "GR00T config"), v, "GR00T config");
}

ActionHeadConfig ActionHeadConfig::from_json_file(const std::string& path, Version v) {
  return head_from_json(io::read_config_json_file(path), v, path);
}

ActionHeadConfig ActionHeadConfig::from_metadata(const std::map<std::string, std::string>& md,
                                                 Version v) {
  auto it = md.find("config");
  if (it == md.end()) return defaults(v);
  return head_from_json(io::parse_config_json(it->second, "checkpoint metadata 'config'"), v,
                        "checkpoint metadata 'config'");
}

std::string ActionHeadConfig::to_json() const {
  json j;
  j["action_dim"] = action_dim;
  j["action_horizon"] = action_horizon;
  j["num_target_vision_tokens"] = future_tokens;
  j["max_seq_len"] = max_seq_len;
  j["num_inference_timesteps"] = num_steps;
  j["num_timestep_buckets"] = num_buckets;
  return j.dump();
}

}  // namespace meshnn::gr00t
