// GR00T configs, slot layout and AdapterPlan (host side, validated before any compute). Long
// (~640 lines): three versions' fields and their cross-checks, each refused with its own message.
#include "meshnn/models/gr00t_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <type_traits>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "models/gr00t_config_fields.h"
#include "models/gr00t_description.h"

namespace meshnn::gr00t {

using nlohmann::json;

// ------------------------------------------------------------------------------------------------
// versions
// ------------------------------------------------------------------------------------------------

const char* version_name(Version v) {
  switch (v) {
    case Version::n1_5:
      return "n1.5";
    case Version::n1_6:
      return "n1.6";
    case Version::n1_7:
      return "n1.7";
  }
  return "?";
}

Version parse_version(const std::string& s) {
  std::string t;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(c));
  // "n1.5" → "n15", "n1d5" → "n1d5", "gr00t_n1_5" → "gr00tn15"
  for (Version v : {Version::n1_5, Version::n1_6, Version::n1_7}) {
    const char minor = version_name(v)[3];
    const std::string a = std::string("n1") + minor, b = std::string("n1d") + minor;
    if (t == a || t == b || t == "gr00t" + a || t == "gr00t" + b) return v;
  }
  throw InvalidArgument("unknown GR00T version '" + s + "' (expected n1.5, n1.6 or n1.7)");
}

const char* gather_mode_name(GatherMode g) { return g == GatherMode::splice ? "splice" : "onehot"; }

GatherMode parse_gather_mode(const std::string& s) {
  if (s == "splice") return GatherMode::splice;
  if (s == "onehot") return GatherMode::onehot;
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

// The adapter's fields of a GR00T config document; the head's (gr00t_head_config.cc) are read from
// the same document, and every other key is refused by both (gr00t_config_fields.h).
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

void check_gr00t_architecture(ConfigReader& root, ConfigReader& head, Config& c) {
  const std::string& where = head.where();
  const char* vn = version_name(c.version);
  // N1.5 runs DiT (every token is a key); N1.6 / N1.7 AlternateVLDiT (text / image key sets).
  const bool alternate = c.version != Version::n1_5;
  if (head.has("use_alternate_vl_dit"))
    MESHNN_CHECK(head.get<bool>("use_alternate_vl_dit") == alternate, where,
                 ": config field 'use_alternate_vl_dit' is ", alternate ? "false" : "true",
                 " but meshnn's ", vn, " head ",
                 alternate ? "is AlternateVLDiT (text / image cross-attention; a plain-DiT "
                             "n1.6 / n1.7 head is not supported)"
                           : "is the plain DiT (N1.5 has no AlternateVLDiT)");
  // The state encoder reads one state step (upstream: max_state_dim · state_history_length).
  if (head.has("state_history_length"))
    MESHNN_CHECK(head.get<int64_t>("state_history_length") == 1, where,
                 ": config field 'state_history_length' = ", head.doc()["state_history_length"],
                 " is not supported (meshnn's state encoder takes 1 state step)");
  // The DiT's proj_out_2 feeds the action decoder (hidden_size wide); its cross-attention reads
  // the backbone features (upstream N1.5 builds it from diffusion_model_cfg alone).
  if (ConfigReader* d = head.child_if("diffusion_model_cfg")) {
    if (d->has("output_dim"))
      MESHNN_CHECK(d->get<int64_t>("output_dim") == c.state.hidden_size, d->where(),
                   ": config field 'output_dim' = ", d->doc()["output_dim"],
                   " must equal hidden_size ", c.state.hidden_size,
                   " (the DiT output feeds the action decoder)");
    if (d->has("cross_attention_dim"))
      MESHNN_CHECK(d->get<int64_t>("cross_attention_dim") == c.backbone_embedding_dim, d->where(),
                   ": config field 'cross_attention_dim' = ", d->doc()["cross_attention_dim"],
                   " must equal backbone_embedding_dim ", c.backbone_embedding_dim,
                   " (the DiT attends to the backbone features)");
  }
  // The backbone layer the features come from (flat N1.6 / N1.7, or N1.5's backbone_cfg).
  ConfigReader* b = root.child_if("backbone_cfg");
  for (ConfigReader* src : {&head, b}) {
    if (src == nullptr || !src->has("select_layer")) continue;
    const int layer = src->get<int>("select_layer");
    MESHNN_CHECK(layer >= 1 && layer <= 4096, src->where(),
                 ": config field 'select_layer' = ", layer,
                 " must be a backbone layer count in [1, 4096]");
    MESHNN_CHECK(c.select_layer == 0 || c.select_layer == layer, where,
                 ": select_layer is given twice (", c.select_layer, " and ", layer, ")");
    c.select_layer = layer;
  }
  // N1.5's Eagle backbone may project its features; they must arrive backbone_embedding_dim wide.
  if (b != nullptr && b->has("project_to_dim"))
    MESHNN_CHECK(b->get<int64_t>("project_to_dim") == c.backbone_embedding_dim, b->where(),
                 ": config field 'project_to_dim' = ", b->doc()["project_to_dim"],
                 " differs from backbone_embedding_dim ", c.backbone_embedding_dim,
                 " (the features meshnn takes are the projected ones)");
  // A nested document's top-level copies of the head's sizes must agree with it.
  if (&root != &head)
    for (const char* k : {"action_dim", "action_horizon"})
      if (root.has(k) && head.has(k))
        MESHNN_CHECK(root.get<int64_t>(k) == head.get<int64_t>(k), root.where(), ": config field '",
                     k, "' = ", root.doc()[k], " differs from action_head_cfg.", k, " = ",
                     head.doc()[k]);
}

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

void Config::validate() const {
  const char* vn = version_name(version);
  MESHNN_CHECK(row_block > 0, vn, ": row_block must be positive, got ", row_block);
  MESHNN_CHECK(backbone_embedding_dim > 0, vn, ": backbone_embedding_dim must be positive");
  if (version == Version::n1_6) {
    MESHNN_CHECK(vl.n_blocks == 0,
                 "version/config mismatch: n1.6 has no VL self-attention but "
                 "vl_self_attention_cfg.num_layers = ",
                 vl.n_blocks);
  } else {
    MESHNN_CHECK(vl.n_blocks > 0, "version/config mismatch: ", vn,
                 " needs VL self-attention but vl_self_attention_cfg.num_layers = 0");
  }
  MESHNN_CHECK(
      dit.key_sets == (version == Version::n1_5 ? CrossKeySets::all : CrossKeySets::text_image),
      "version/config mismatch: cross key sets of ", vn);
  if (vl.n_blocks > 0) {
    MESHNN_CHECK(vl.n_heads > 0 && vl.head_dim > 0 && vl.n_heads * vl.head_dim == vl.dim, vn,
                 ": vl_self_attention_cfg num_attention_heads × attention_head_dim = ", vl.n_heads,
                 " × ", vl.head_dim, " must equal backbone_embedding_dim ", vl.dim);
    MESHNN_CHECK(vl.ff_dim > 0, vn, ": vl_self_attention_cfg.ff_inner_dim must be positive");
    MESHNN_CHECK(vl.activation == "gelu_tanh", vn, ": unsupported VL-SA activation '",
                 vl.activation, "'");
  }
  MESHNN_CHECK(vl.dim == backbone_embedding_dim && dit.cross_attention_dim == vl.dim, vn,
               ": vl_adapter.dim=", vl.dim,
               ", diffusion_model_cfg.cross_attention_dim=", dit.cross_attention_dim,
               ", backbone_embedding_dim=", backbone_embedding_dim, " must agree");
  MESHNN_CHECK(
      dit.n_layers > 0 && dit.n_heads > 0 && dit.head_dim > 0, vn,
      ": diffusion_model_cfg num_layers / num_attention_heads / attention_head_dim must be "
      "positive");
  if (version != Version::n1_5) {
    // AlternateVLDiT raises unless interleave_self_attention is true.
    MESHNN_CHECK(dit.interleave_self_attention, vn,
                 ": AlternateVLDiT needs diffusion_model_cfg.interleave_self_attention = true");
    MESHNN_CHECK(dit.attend_text_every_n_blocks > 0, vn,
                 ": diffusion_model_cfg.attend_text_every_n_blocks must be positive");
  }
  MESHNN_CHECK(state.max_state_dim > 0 && state.hidden_size > 0 && state.input_embedding_dim > 0,
               vn, ": state encoder dims must be positive");
  MESHNN_CHECK(state.state_dim_pad >= state.max_state_dim && state.state_dim_pad % row_block == 0,
               vn, ": state_dim_pad=", state.state_dim_pad, " must be a multiple of ", row_block,
               " >= max_state_dim=", state.max_state_dim);
  MESHNN_CHECK(state.input_embedding_dim == dit.inner_dim(), vn, ": input_embedding_dim ",
               state.input_embedding_dim, " != DiT heads × head dim ", dit.inner_dim());
  MESHNN_CHECK(state.num_embodiments > 0, vn, ": max_num_embodiments must be positive");
}

// ------------------------------------------------------------------------------------------------
// slot layout
// ------------------------------------------------------------------------------------------------

SlotLayout::SlotLayout(std::vector<int64_t> slot_of_token, std::vector<TokenType> types,
                       int64_t s_pad, int64_t row_block)
    : slot_of_token_(std::move(slot_of_token)),
      types_(std::move(types)),
      s_pad_(s_pad),
      row_block_(row_block) {
  MESHNN_CHECK(row_block_ > 0, "slot layout: row_block must be positive, got ", row_block_);
  MESHNN_CHECK(!slot_of_token_.empty(), "slot layout: slot_of_token is empty (S = 0)");
  MESHNN_CHECK(types_.size() == slot_of_token_.size(), "slot_of_token must be (S=", types_.size(),
               ",), got (", slot_of_token_.size(), ",)");
  MESHNN_CHECK(s_pad_ > 0 && s_pad_ % row_block_ == 0, "slot layout: S_pad=", s_pad_,
               " must be a positive multiple of ", row_block_);
  slot_type_.assign(static_cast<size_t>(s_pad_), -1);
  for (size_t t = 0; t < slot_of_token_.size(); ++t) {
    const int64_t s = slot_of_token_[t];
    MESHNN_CHECK(s >= 0 && s < s_pad_, "slot_of_token[", t, "] = ", s,
                 " is outside [0, S_pad=", s_pad_, ")");
    MESHNN_CHECK(slot_type_[s] < 0, "slot_of_token: slot ", s, " holds two tokens");
    const auto ty = static_cast<uint8_t>(types_[t]);
    MESHNN_CHECK(ty <= 2, "token_types[", t, "] = ", int(ty),
                 " (expected 0 text, 1 image, 2 padding)");
    slot_type_[s] = static_cast<int8_t>(ty);
  }
}

SlotLayout SlotLayout::from_token_types(const std::vector<int>& types, int64_t row_block) {
  MESHNN_CHECK(row_block > 0, "slot layout: row_block must be positive");
  std::vector<int64_t> sot(types.size());
  std::vector<TokenType> tt(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    MESHNN_CHECK(types[t] >= 0 && types[t] <= 2, "token_types[", t, "] = ", types[t],
                 " (expected 0 text, 1 image, 2 padding)");
    sot[t] = static_cast<int64_t>(t);
    tt[t] = static_cast<TokenType>(types[t]);
  }
  const int64_t s = static_cast<int64_t>(types.size());
  return SlotLayout(std::move(sot), std::move(tt),
                    std::max<int64_t>(1, (s + row_block - 1) / row_block) * row_block, row_block);
}

SlotLayout SlotLayout::from_token_types(const Tensor& types, int64_t row_block) {
  MESHNN_CHECK_AS(
      ShapeError,
      types.defined() && (types.rank() == 1 || (types.rank() == 2 && types.dim(0) == 1)),
      "token_types must be (S) or (1, S), got ",
      types.defined() ? shape_str(types.shape()) : "undefined");
  const Tensor d = types.to(DType::f64);
  std::vector<int> v(static_cast<size_t>(d.numel()));
  for (int64_t i = 0; i < d.numel(); ++i) {
    const double x = d.data<double>()[i];
    MESHNN_CHECK(x == 0 || x == 1 || x == 2, "token_types[", i, "] = ", x,
                 " (expected 0 text, 1 image, 2 padding)");
    v[static_cast<size_t>(i)] = static_cast<int>(x);
  }
  return from_token_types(v, row_block);
}

std::vector<uint8_t> SlotLayout::key_valid() const {
  std::vector<uint8_t> k(static_cast<size_t>(s_pad_));
  for (int64_t s = 0; s < s_pad_; ++s) k[s] = slot_type_[s] >= 0;
  return k;
}

Tensor SlotLayout::key_valid_mask() const { return Tensor::from_vector(key_valid(), {s_pad_}); }

int64_t SlotLayout::active_slots() const {
  int64_t last = 0;
  for (int64_t s = 0; s < s_pad_; ++s)
    if (slot_type_[s] >= 0) last = s + 1;
  return last;
}

namespace {
std::vector<Run> runs_of(const std::vector<int8_t>& slot_type, int8_t want) {
  std::vector<Run> runs;
  const int64_t n = static_cast<int64_t>(slot_type.size());
  for (int64_t s = 0; s < n;) {
    if (slot_type[s] != want) {
      ++s;
      continue;
    }
    int64_t e = s;
    while (e < n && slot_type[e] == want) ++e;
    runs.emplace_back(s, e);
    s = e;
  }
  return runs;
}
int64_t runs_length(const std::vector<Run>& r) {
  int64_t n = 0;
  for (auto& [b, e] : r) n += e - b;
  return n;
}
}  // namespace

std::vector<Run> SlotLayout::image_runs() const { return runs_of(slot_type_, 1); }
std::vector<Run> SlotLayout::text_runs() const { return runs_of(slot_type_, 0); }

std::pair<int64_t, int64_t> SlotLayout::key_set_lengths(const std::string& ks) const {
  if (ks == "all") return {s_pad_, s_pad_};
  int64_t l_real;
  if (ks == "image")
    l_real = runs_length(image_runs());
  else if (ks == "text")
    l_real = runs_length(text_runs());
  else
    throw InvalidArgument("unknown key set '" + ks + "'; expected one of (all, text, image)");
  return {l_real, std::max<int64_t>(1, (l_real + row_block_ - 1) / row_block_) * row_block_};
}

std::vector<int64_t> SlotLayout::gather_index(const std::string& ks) const {
  std::vector<int64_t> idx;
  if (ks == "all") {
    for (int64_t s = 0; s < s_pad_; ++s) idx.push_back(s);
    return idx;
  }
  std::vector<Run> runs;
  if (ks == "image")
    runs = image_runs();
  else if (ks == "text")
    runs = text_runs();
  else
    throw InvalidArgument("unknown key set '" + ks + "'; expected one of (all, text, image)");
  for (auto& [b, e] : runs)
    for (int64_t s = b; s < e; ++s) idx.push_back(s);
  return idx;
}

Tensor SlotLayout::onehot_gather_matrix(const std::string& ks) const {
  const auto [l_real, l_pad] = key_set_lengths(ks);
  const std::vector<int64_t> idx = gather_index(ks);
  MESHNN_CHECK_AS(Error, static_cast<int64_t>(idx.size()) == l_real, ks, ": index has ", idx.size(),
                  " entries, expected L_real=", l_real);
  Tensor p({l_pad, s_pad_});
  float* d = p.data<float>();
  for (int64_t r = 0; r < l_real; ++r) d[r * s_pad_ + idx[r]] = 1.f;
  return p;
}

Tensor SlotLayout::rows_to_slots(const Tensor& x_in) const {
  Tensor x = x_in;
  if (x.rank() == 2) x = x.reshape({1, x.dim(0), x.dim(1)});
  MESHNN_CHECK_AS(ShapeError, x.rank() == 3 && x.dim(0) == 1,
                  "rows_to_slots expects [1, S, D] or [S, D], got ", shape_str(x_in.shape()));
  MESHNN_CHECK_AS(ShapeError, x.dim(1) == seq_len(), "rows_to_slots: ", x.dim(1),
                  " rows but the slot layout has S=", seq_len());
  const int64_t D = x.dim(2);
  const Tensor xf = x.to(DType::f32);
  Tensor out({1, 1, s_pad_, D});
  for (int64_t t = 0; t < seq_len(); ++t)
    std::memcpy(out.data<float>() + slot_of_token_[t] * D, xf.data<float>() + t * D, D * 4);
  return out;
}

Tensor SlotLayout::slots_to_rows(const Tensor& x_in) const {
  Tensor x = x_in;
  while (x.rank() > 2 && x.dim(0) == 1) {
    Shape s(x.shape().begin() + 1, x.shape().end());
    x = x.reshape(s);
  }
  MESHNN_CHECK_AS(ShapeError, x.rank() == 2,
                  "slots_to_rows expects [1, 1, S_pad, D], got a tensor that squeezes to ",
                  shape_str(x.shape()));
  MESHNN_CHECK_AS(ShapeError, x.dim(0) == s_pad_, "slots_to_rows: ", x.dim(0),
                  " rows != S_pad=", s_pad_);
  const int64_t D = x.dim(1);
  const Tensor xf = x.to(DType::f32);
  Tensor out = Tensor::empty({1, seq_len(), D});
  for (int64_t t = 0; t < seq_len(); ++t)
    std::memcpy(out.data<float>() + t * D, xf.data<float>() + slot_of_token_[t] * D, D * 4);
  return out;
}

std::string SlotLayout::describe_json() const {
  json j;
  j["seq_len"] = seq_len();
  j["s_pad"] = s_pad_;
  j["active_slots"] = active_slots();
  j["row_block"] = row_block_;
  auto runs_json = [](const std::vector<Run>& r) {
    json a = json::array();
    for (auto& [b, e] : r) a.push_back({b, e});
    return a;
  };
  j["image_runs"] = runs_json(image_runs());
  j["text_runs"] = runs_json(text_runs());
  return j.dump();
}

Tensor state_rows(const Tensor& state, int64_t d_pad, int64_t rows) {
  MESHNN_CHECK(state.defined(), "state is undefined");
  const bool ok_rank = state.rank() == 1 || (state.rank() == 2 && state.dim(0) == 1) ||
                       (state.rank() == 3 && state.dim(0) == 1 && state.dim(1) == 1);
  MESHNN_CHECK_AS(ShapeError, ok_rank, "state must be [1, 1, D_max], got ",
                  shape_str(state.shape()));
  const int64_t d = state.dim(-1);
  MESHNN_CHECK(rows > 0 && d_pad > 0, "state_rows: rows and d_pad must be positive");
  MESHNN_CHECK_AS(ShapeError, d <= d_pad, "state width ", d, " does not fit state_dim_pad=", d_pad);
  const Tensor s = state.to(DType::f32);
  const float* p = s.data<float>();
  for (int64_t i = 0; i < d; ++i)
    MESHNN_CHECK(std::isfinite(p[i]), "state contains non-finite values (state[", i, "] = ", p[i],
                 ")");
  Tensor out({1, 1, rows, d_pad});
  std::memcpy(out.data<float>(), p, sizeof(float) * d);
  return out;
}

// ------------------------------------------------------------------------------------------------
// weights
// ------------------------------------------------------------------------------------------------

// adapter_weight_shapes, detect_weight_prefix: models/gr00t_description.cc (the key table).

// ------------------------------------------------------------------------------------------------
// plan
// ------------------------------------------------------------------------------------------------

AdapterPlan AdapterPlan::build(const Config& cfg, const SlotLayout& layout,
                               const AdapterOptions& options, const WeightLookup* weights,
                               const std::string& weight_prefix, int tp, int tp_rank) {
  cfg.validate();
  const char* vn = version_name(cfg.version);
  AdapterPlan p;
  p.config = cfg;
  p.layout = layout;
  p.options = options;
  p.weight_prefix = weight_prefix;
  for (Precision pr : {options.precision, options.hoist_precision, options.state_precision})
    MESHNN_CHECK(pr == Precision::fp32 || pr == Precision::bf16, vn, ": precision ",
                 precision_name(pr), " is not available for the adapter (fp32 | bf16)");
  MESHNN_CHECK(layout.seq_len() > 0, vn, ": the slot layout is empty");
  MESHNN_CHECK(layout.row_block() == cfg.row_block, vn, ": layout row_block ", layout.row_block(),
               " != config row_block ", cfg.row_block);
  p.s_pad = layout.s_pad();
  MESHNN_CHECK(p.s_pad % cfg.row_block == 0, vn, ": S_pad=", p.s_pad, " is not a multiple of ",
               cfg.row_block);
  p.s_active = layout.active_slots();
  p.dim = cfg.vl.dim;
  p.n_vlsa = cfg.vl.n_blocks;
  p.vlsa_scale =
      p.n_vlsa ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(cfg.vl.head_dim))) : 0.f;
  // The seed pads the DiT head dim 48 → 64 for its 32-wide tiles; a CPU has no tiles, so the
  // buffers keep the true head dim (and the softmax scale 1/sqrt(48) has nothing to correct).
  p.n_heads = cfg.dit.n_heads;
  p.head_dim = cfg.dit.head_dim;
  p.kv_width = 2 * p.n_heads * p.head_dim;
  p.vl_mask_present = p.n_vlsa > 0;
  MESHNN_CHECK(tp >= 1 && tp_rank >= 0 && tp_rank < tp, vn, ": bad head-parallel split ", tp_rank,
               " of ", tp);
  MESHNN_CHECK(options.mesh_axis == 0 || options.mesh_axis == 1, vn,
               ": mesh_axis must be 0 or 1, got ", options.mesh_axis);
  p.tp = tp;
  p.tp_rank = tp_rank;
  if (tp > 1) {
    MESHNN_CHECK(cfg.dit.n_heads % tp == 0, vn, ": head-parallel over ", tp,
                 " devices needs diffusion_model_cfg.num_attention_heads (", cfg.dit.n_heads,
                 ") divisible by ", tp);
    MESHNN_CHECK(p.n_vlsa == 0 || cfg.vl.n_heads % tp == 0, vn, ": head-parallel over ", tp,
                 " devices needs vl_self_attention_cfg.num_attention_heads (", cfg.vl.n_heads,
                 ") divisible by ", tp);
    MESHNN_CHECK(p.n_vlsa == 0 || cfg.vl.ff_dim % tp == 0, vn, ": head-parallel over ", tp,
                 " devices needs ff_inner_dim (", cfg.vl.ff_dim, ") divisible by ", tp);
  }
  p.m_rows = (p.s_active + tp - 1) / tp * tp;
  MESHNN_CHECK(p.m_rows <= p.s_pad, vn, ": ", p.s_active, " active slots rounded up to ", tp,
               " devices exceed S_pad=", p.s_pad);

  if (cfg.dit.key_sets == CrossKeySets::all) {
    KeySetPlan k;
    k.name = "all";
    k.runs = {{0, p.s_pad}};
    std::tie(k.l_real, k.l_pad) = layout.key_set_lengths("all");
    k.identity = true;
    k.mask_present = layout.seq_len() < p.s_pad;  // pad slots must be hidden in the DiT
    p.key_sets["all"] = k;
  } else {
    for (const char* name : {"text", "image"}) {
      KeySetPlan k;
      k.name = name;
      k.runs = std::string(name) == "text" ? layout.text_runs() : layout.image_runs();
      std::tie(k.l_real, k.l_pad) = layout.key_set_lengths(name);
      MESHNN_CHECK(k.l_real > 0, vn, ": the layout has no ", name,
                   " tokens but cross blocks read "
                   "the '",
                   name, "' key set (attention over no keys is undefined)");
      MESHNN_CHECK(runs_length(k.runs) == k.l_real, name, ": runs cover ", runs_length(k.runs),
                   " rows, layout says ", k.l_real);
      MESHNN_CHECK(k.l_pad >= k.l_real && k.l_pad % cfg.row_block == 0, name, ": L_pad=", k.l_pad,
                   " must be a multiple of ", cfg.row_block, " >= L_real=", k.l_real);
      k.identity = false;
      k.mask_present = k.l_pad > k.l_real;
      p.key_sets[name] = k;
    }
  }
  std::set<int64_t> lengths;
  for (int i : cfg.dit.cross_block_indices()) {
    const std::string ks = cfg.dit.key_set(i);
    MESHNN_CHECK(p.key_sets.count(ks), "block ", i, ": key set '", ks,
                 "' not among the layout's sets");
    p.blocks.push_back({i, ks, p.key_sets[ks].l_pad});
    lengths.insert(p.key_sets[ks].l_pad);
  }
  MESHNN_CHECK(!p.blocks.empty(), vn, ": no cross blocks");
  p.hoist_lengths.assign(lengths.begin(), lengths.end());

  if (weights)
    require_weights(describe_adapter(cfg, weight_prefix), *weights, std::string(vn) + " adapter");
  return p;
}

bool AdapterPlan::cross_mask_present(int block) const {
  for (const HoistBlockPlan& b : blocks)
    if (b.block == block) return key_sets.at(b.key_set).mask_present;
  throw InvalidArgument(
      detail::concat("block ", block, " is not a cross block of ", version_name(config.version)));
}

std::vector<std::string> AdapterPlan::gathered_sets() const {
  std::vector<std::string> out;
  for (const auto& [n, k] : key_sets)
    if (!k.identity) out.push_back(n);
  return out;
}

std::string AdapterPlan::describe() const {
  json j;
  j["version"] = version_name(config.version);
  j["gather_mode"] = gather_mode_name(options.gather_mode);
  j["precision"] = precision_name(options.precision);
  j["hoist_precision"] = precision_name(options.hoist_precision);
  j["state_precision"] = precision_name(options.state_precision);
  j["s_pad"] = s_pad;
  j["s_active"] = s_active;
  j["seq_len"] = layout.seq_len();
  j["dim"] = dim;
  j["n_vlsa"] = n_vlsa;
  j["vlsa"] = {{"heads", config.vl.n_heads}, {"head_dim", config.vl.head_dim},
               {"ff_dim", config.vl.ff_dim}, {"eps", config.vl.ln_eps},
               {"scale", vlsa_scale},        {"activation", config.vl.activation}};
  j["vl_mask"] = vl_mask_present;
  j["dit"] = {{"heads", n_heads}, {"head_dim", head_dim}, {"kv_width", kv_width}};
  json ks = json::object();
  for (const auto& [n, k] : key_sets) {
    json runs = json::array();
    for (auto& [b, e] : k.runs) runs.push_back({b, e});
    ks[n] = {{"l_real", k.l_real},
             {"l_pad", k.l_pad},
             {"runs", runs},
             {"mask", k.mask_present},
             {"identity", k.identity}};
  }
  j["key_sets"] = ks;
  json bl = json::array();
  for (const auto& b : blocks)
    bl.push_back({{"dit_block", b.block}, {"key_set", b.key_set}, {"l_pad", b.l_pad}});
  j["blocks"] = bl;
  j["hoist_lengths"] = hoist_lengths;
  j["state"] = {{"d_max", config.state.max_state_dim},
                {"d_pad", config.state.state_dim_pad},
                {"rows", config.row_block},
                {"hidden", config.state.hidden_size},
                {"out", config.state.input_embedding_dim},
                {"embodiments", config.state.num_embodiments}};
  j["weight_prefix"] = weight_prefix;
  j["head_parallel"] = {
      {"devices", tp}, {"index", tp_rank}, {"mesh_axis", options.mesh_axis}, {"vlsa_rows", m_rows}};
  return j.dump(2);
}

}  // namespace meshnn::gr00t
