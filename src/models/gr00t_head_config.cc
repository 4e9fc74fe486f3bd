// GR00T action-head config: the per-version defaults and the strict JSON reader (its own file so
// that the config fuzzer links it without the head's compute).
#include <nlohmann/json.hpp>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/models/gr00t_action_head.h"

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

// Strict, as the adapter config reader: "action_horizon": 16.7 is refused, not run as 16.
template <class T>
void take(const json& j, const char* key, T& dst) {
  io::take_config_field(j, key, dst, "");
}

ActionHeadConfig head_from_json(const json& root, Version v) {
  MESHNN_CHECK(root.is_object(), "GR00T config: expected a JSON object");
  const json& j = root.contains("action_head_cfg") ? root["action_head_cfg"] : root;
  ActionHeadConfig c = ActionHeadConfig::defaults(v);
  take(j, "max_action_dim", c.action_dim);
  take(j, "action_dim", c.action_dim);
  take(j, "action_horizon", c.action_horizon);
  take(j, "num_target_vision_tokens", c.future_tokens);
  take(j, "max_seq_len", c.max_seq_len);
  take(j, "num_inference_timesteps", c.num_steps);
  take(j, "num_timestep_buckets", c.num_buckets);
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
  return head_from_json(io::parse_json(json_text, "GR00T config"), v);
}

ActionHeadConfig ActionHeadConfig::from_metadata(const std::map<std::string, std::string>& md,
                                                 Version v) {
  auto it = md.find("config");
  if (it == md.end()) return defaults(v);
  return head_from_json(io::parse_json(it->second, "checkpoint metadata 'config'"), v);
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
