// GR00T config cross-checks: the architecture fields meshnn checks rather than builds from, and
// Config::validate (each version's dims and key sets, each refused with its own message).
#include "meshnn/core/error.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/config_fields.h"

namespace meshnn::gr00t {

using io::ConfigReader;

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
}  // namespace meshnn::gr00t
