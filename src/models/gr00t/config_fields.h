// The fields of a GR00T config document (the --config file, a checkpoint folder's config.json or
// a checkpoint's `config` metadata) that meshnn knows: the complete field sets the upstream config
// classes write (Isaac-GR00T N1.5 GR00T_N1_5 + FlowmatchingActionHeadConfig, Isaac-GR00T
// Gr00tN1d6Config / Gr00tN1d7Config, lerobot's GR00TN17Config; see docs/gr00t.md). The adapter
// (Config) and the action head (ActionHeadConfig) read different fields of one document, so each
// reader declares the whole set before its finish(): a key outside it is refused by both
// (io/config_reader.h), all unknown keys in one error (or logged and ignored under
// --allow-unknown-config). Architecture fields meshnn does not build from are cross-checked by
// check_gr00t_architecture.
#pragma once

#include "io/config_reader.h"
#include "meshnn/gr00t_config.h"

namespace meshnn::gr00t {

// The DiT / VL-SA sections (upstream DiT and SelfAttentionTransformer constructor arguments).
inline void allow_transformer_section(io::ConfigReader& s) {
  // Read by meshnn.
  s.allow({"num_layers", "num_attention_heads", "attention_head_dim", "ff_inner_dim",
           "cross_attention_dim", "interleave_self_attention", "attend_text_every_n_blocks"});
  // Fixed in meshnn's wiring: when present they must say what it runs (ada_norm DiT blocks with
  // biased attention, tanh-GELU, affine-free LayerNorm at 1e-5, no position embedding in blocks).
  s.require_if_present("norm_type", "ada_norm");
  s.require_if_present("attention_bias", true);
  s.require_if_present("activation_fn", "gelu-approximate");
  s.require_if_present("norm_elementwise_affine", false);
  s.require_if_present("norm_eps", 1e-5);
  s.require_if_present("positional_embeddings", nullptr);
  // Training-only (dropout), numerics bookkeeping, and sizes checked against the head
  // (output_dim: check_gr00t_architecture) or unused without position embeddings.
  s.allow({"dropout", "final_dropout", "output_dim", "upcast_attention", "compute_dtype",
           "num_embeds_ada_norm", "max_num_positional_embeddings"});
}

// The N1.5 backbone section (Isaac-GR00T EagleBackbone arguments): the backbone runs outside
// meshnn; select_layer and project_to_dim are cross-checked.
inline void allow_backbone_section(io::ConfigReader& b) {
  b.allow({"select_layer", "project_to_dim", "eagle_path", "model_name", "load_bf16",
           "reproject_vision", "tune_llm", "tune_visual", "use_flash_attention"});
}

// root: the document; head: its action_head_cfg section, or the root itself for flat configs
// (N1.6 / N1.7 write one flat object).
inline void allow_gr00t_fields(io::ConfigReader& root, io::ConfigReader& head) {
  // What the two readers read (the head section; version tags also at the top level).
  head.allow({"gr00t_version",
              "model_type",
              "backbone_embedding_dim",
              "max_state_dim",
              "hidden_size",
              "input_embedding_dim",
              "max_num_embodiments",
              "row_block",
              "state_dim_pad",
              "use_vl_self_attention",
              "vl_self_attention_cfg",
              "diffusion_model_cfg",
              "attend_text_every_n_blocks",
              "max_action_dim",
              "action_dim",
              "action_horizon",
              "num_target_vision_tokens",
              "max_seq_len",
              "num_inference_timesteps",
              "num_timestep_buckets"});
  // Architecture fields meshnn checks rather than builds from (check_gr00t_architecture).
  head.allow({"use_alternate_vl_dit", "select_layer", "state_history_length", "architectures"});
  // Upstream switches of what meshnn always runs: when present they must say so.
  head.require_if_present("add_pos_embed", true);
  head.require_if_present("use_vlln", true);
  head.require_if_present("strict_action_padding_mask", false);
  // Upstream fields that do not change the head's inference:
  head.allow({// dtypes and the HF wrapper's bookkeeping
              "model_dtype", "compute_dtype", "torch_dtype", "dtype", "transformers_version",
              "attn_implementation",
              // training: the flow-matching loss's noise schedule, dropout, state augmentation,
              // N1.5's detection / batch-expansion training options
              "noise_s", "noise_beta_alpha", "noise_beta_beta", "attn_dropout",
              "state_dropout_prob", "state_additive_noise_scale",
              "load_pretrained_det_decode_layer_path", "detection_coeff", "freeze_decode_layer",
              "expand_batch",
              // the backbone (run outside meshnn; features arrive already computed)
              "model_name", "model_revision", "backbone_model_type", "reproject_vision",
              "use_flash_attention", "load_bf16", "backbone_trainable_params_fp32",
              "eagle_collator", "collator_overwrite_image_inputs",
              // the processor (images, language, state / action normalisation before meshnn)
              "image_crop_size", "image_target_size", "shortest_image_edge", "crop_fraction",
              "random_rotation_angle", "color_jitter_params", "use_albumentations_transforms",
              "letter_box_transform", "extra_augmentation_config", "formalize_language",
              "apply_sincos_state_encoding", "use_percentiles", "use_relative_action",
              "use_mean_std", "exclude_state",
              // real-time chunking (inpainting from a previous chunk; meshnn does not run it)
              "rtc_ramp_rate"});
  for (const char* p : {"_", "tune_"}) head.allow_prefix(p);
  for (const char* section : {"diffusion_model_cfg", "vl_self_attention_cfg"})
    if (io::ConfigReader* s = head.child_if(section)) allow_transformer_section(*s);
  if (&root != &head) {
    // A nested (N1.5) document's top level: the HF model wrapper (backbone, architectures,
    // dtypes) and its copies of the head's sizes (hidden_size here is the backbone's).
    root.allow({"action_head_cfg", "architectures", "model_type", "gr00t_version", "torch_dtype",
                "dtype", "transformers_version", "compute_dtype", "model_dtype", "action_dim",
                "action_horizon", "hidden_size", "attn_implementation"});
    root.allow_prefix("_");
  }
  if (io::ConfigReader* b = root.child_if("backbone_cfg")) allow_backbone_section(*b);
}

// The architecture fields meshnn does not build from but whose values must agree with the model
// it runs (c: the adapter config read from the same document, version and dims final). The
// backbone layer (select_layer) is recorded in c.
void check_gr00t_architecture(io::ConfigReader& root, io::ConfigReader& head, Config& c);

}  // namespace meshnn::gr00t
