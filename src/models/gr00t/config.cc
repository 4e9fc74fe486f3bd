// GR00T configs: versions, defaults and the config document reader (host side). The upstream
// field sets are in config_fields.h; cross-checks in config_checks.cc.
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/enum_names.h"
#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/config_fields.h"

namespace meshnn::gr00t {

using nlohmann::json;

// ------------------------------------------------------------------------------------------------
// versions
// ------------------------------------------------------------------------------------------------

namespace {
constexpr EnumNames<Version, 3> kVersionNames{
    "GR00T version", {{Version::n1_5, "n1.5"}, {Version::n1_6, "n1.6"}, {Version::n1_7, "n1.7"}}};
constexpr EnumNames<GatherMode, 2> kGatherModeNames{
    "gather_mode", {{GatherMode::splice, "splice"}, {GatherMode::onehot, "onehot"}}};
}  // namespace

const char* version_name(Version v) { return kVersionNames.name(v); }

Version parse_version(const std::string& s) {
  std::string t;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(c));
  // "n1.5" → "n15", "n1d5" → "n1d5", "gr00t_n1_5" → "gr00tn15"
  for (Version v : kVersionNames.values()) {
    const char minor = version_name(v)[3];
    const std::string a = std::string("n1") + minor, b = std::string("n1d") + minor;
    if (t == a || t == b || t == "gr00t" + a || t == "gr00t" + b) return v;
  }
  throw InvalidArgument(
      detail::concat("unknown GR00T version '", s, "' (expected ", kVersionNames.list_text(), ")"));
}

const char* gather_mode_name(GatherMode g) { return kGatherModeNames.name(g); }

GatherMode parse_gather_mode(const std::string& s) {
  if (const auto g = kGatherModeNames.find(s)) return *g;
  throw InvalidArgument("gather_mode must be one of (splice, onehot), got '" + s + "'");
}

// ------------------------------------------------------------------------------------------------
// config
// ------------------------------------------------------------------------------------------------

std::vector<int> DitConfig::cross_block_indices() const {
  std::vector<int> out;
  for (int i = 0; i < n_layers; ++i)
    if (!(interleave_self_attention && i % 2 == 1)) out.push_back(i);
  return out;
}

std::string DitConfig::key_set(int block) const {
  if (key_sets == CrossKeySets::all) return "all";
  return block % (2 * attend_text_every_n_blocks) == 0 ? "text" : "image";
}

namespace {
int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
}  // namespace

Config Config::defaults(Version v) {
  Config c;
  c.version = v;
  switch (v) {
    case Version::n1_5:
      c.vl.n_blocks = 4;
      c.dit.n_layers = 16;
      c.dit.key_sets = CrossKeySets::all;
      c.state.max_state_dim = 64;
      break;
    case Version::n1_6:
      c.vl.n_blocks = 0;
      c.dit.n_layers = 32;
      c.dit.key_sets = CrossKeySets::text_image;
      c.state.max_state_dim = 128;
      break;
    case Version::n1_7:
      c.vl.n_blocks = 4;
      c.dit.n_layers = 32;
      c.dit.key_sets = CrossKeySets::text_image;
      c.state.max_state_dim = 132;
      break;
  }
  c.state.state_dim_pad = round_up(c.state.max_state_dim, c.row_block);  // 64 / 128 / 160
  return c;
}

namespace {

using io::ConfigReader;

// A version tag of the document (model_type, gr00t_version, an architectures entry): one that
// names another GR00T version is refused; one that names none says nothing about it.
void check_version_tag(Version v, const std::string& s, const char* field) {
  Version cv;
  try {
    cv = parse_version(s);
  } catch (const InvalidArgument&) {
    return;
  }
  MESHNN_CHECK(cv == v, "version/config mismatch: asked for ", version_name(v),
               " but the config's ", field, " is '", s, "'");
}

// The adapter's fields of a GR00T config document; the head's (head_config.cc) are read from
// the same document, and every other key is refused by both (config_fields.h).
Config apply_json(const json& root, Version v, const std::string& where) {
  ConfigReader rr(root, where);
  ConfigReader* nested = rr.child_if("action_head_cfg");
  ConfigReader& h = nested != nullptr ? *nested : rr;
  for (ConfigReader* src : {&rr, &h}) {
    for (const char* k : {"gr00t_version", "model_type"}) {
      if (src->doc().contains(k) && src->doc()[k].is_string())
        check_version_tag(v, src->get<std::string>(k), k);
    }
    // The HF wrapper's class names ("GR00T_N1_5", "Gr00tN1d6", …).
    if (src->has("architectures"))
      for (const std::string& a : src->get<std::vector<std::string>>("architectures"))
        check_version_tag(v, a, "architectures");
  }
  Config c = Config::defaults(v);
  h.take("backbone_embedding_dim", c.backbone_embedding_dim);
  h.take("max_state_dim", c.state.max_state_dim);
  h.take("hidden_size", c.state.hidden_size);
  h.take("input_embedding_dim", c.state.input_embedding_dim);
  h.take("max_num_embodiments", c.state.num_embodiments);
  h.take("row_block", c.row_block);
  const bool pad_given = h.take("state_dim_pad", c.state.state_dim_pad);
  c.vl.dim = c.backbone_embedding_dim;
  bool use_vlsa = c.vl.n_blocks > 0;
  const bool vlsa_given = h.take("use_vl_self_attention", use_vlsa);
  if (ConfigReader* s = h.child_if("vl_self_attention_cfg")) {
    s->take("num_layers", c.vl.n_blocks);
    s->take("num_attention_heads", c.vl.n_heads);
    s->take("attention_head_dim", c.vl.head_dim);
    c.vl.ff_dim = 4 * c.vl.n_heads * c.vl.head_dim;
    s->take("ff_inner_dim", c.vl.ff_dim);
    if (!vlsa_given) use_vlsa = c.vl.n_blocks > 0;
  } else {
    c.vl.ff_dim = 4 * c.vl.n_heads * c.vl.head_dim;
  }
  if (!use_vlsa) c.vl.n_blocks = 0;
  if (ConfigReader* d = h.child_if("diffusion_model_cfg")) {
    d->take("num_layers", c.dit.n_layers);
    d->take("num_attention_heads", c.dit.n_heads);
    d->take("attention_head_dim", c.dit.head_dim);
    d->take("cross_attention_dim", c.dit.cross_attention_dim);
    d->take("interleave_self_attention", c.dit.interleave_self_attention);
    d->take("attend_text_every_n_blocks", c.dit.attend_text_every_n_blocks);
  }
  // As the upstream heads: attend_text_every_n_blocks is a top-level field of the head config
  // (it wins over a copy under diffusion_model_cfg), and the DiT's cross_attention_dim is the
  // backbone_embedding_dim the head passes to it (a diffusion_model_cfg value is overridden).
  h.take("attend_text_every_n_blocks", c.dit.attend_text_every_n_blocks);
  c.dit.cross_attention_dim = c.backbone_embedding_dim;
  if (!pad_given) c.state.state_dim_pad = round_up(c.state.max_state_dim, c.row_block);
  allow_gr00t_fields(rr, h);
  check_gr00t_architecture(rr, h, c);
  rr.finish();
  c.validate();
  return c;
}

}  // namespace

Config Config::from_json(const std::string& json_text, Version v) {
  return apply_json(io::parse_config_json(json_text, "GR00T config"), v, "GR00T config");
}

Config Config::from_json_file(const std::string& path, Version v) {
  return apply_json(io::read_config_json_file(path), v, path);
}

Config Config::from_metadata(const std::map<std::string, std::string>& md, Version v) {
  json j = json::object();
  auto it = md.find("config");
  if (it != md.end()) j = io::parse_config_json(it->second, "checkpoint metadata 'config'");
  auto vt = md.find("gr00t_version");
  if (vt != md.end()) {
    MESHNN_CHECK(parse_version(vt->second) == v, "version/config mismatch: asked for ",
                 version_name(v), " but the checkpoint metadata gr00t_version is '", vt->second,
                 "'");
  }
  return apply_json(j, v, "checkpoint metadata 'config'");
}

std::string Config::to_json() const {
  json j;
  j["gr00t_version"] = version_name(version);
  j["backbone_embedding_dim"] = backbone_embedding_dim;
  if (select_layer > 0) j["select_layer"] = select_layer;
  j["use_vl_self_attention"] = vl.n_blocks > 0;
  j["vl_self_attention_cfg"] = {{"num_layers", vl.n_blocks},
                                {"num_attention_heads", vl.n_heads},
                                {"attention_head_dim", vl.head_dim},
                                {"ff_inner_dim", vl.ff_dim}};
  j["diffusion_model_cfg"] = {{"num_layers", dit.n_layers},
                              {"num_attention_heads", dit.n_heads},
                              {"attention_head_dim", dit.head_dim},
                              {"cross_attention_dim", dit.cross_attention_dim},
                              {"interleave_self_attention", dit.interleave_self_attention},
                              {"attend_text_every_n_blocks", dit.attend_text_every_n_blocks}};
  j["max_state_dim"] = state.max_state_dim;
  j["state_dim_pad"] = state.state_dim_pad;
  j["hidden_size"] = state.hidden_size;
  j["input_embedding_dim"] = state.input_embedding_dim;
  j["max_num_embodiments"] = state.num_embodiments;
  j["row_block"] = row_block;
  return j.dump();
}

// detect_weight_prefix: models/gr00t/description.cc (the key table).

}  // namespace meshnn::gr00t
