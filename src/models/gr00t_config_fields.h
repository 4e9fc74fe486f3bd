// The fields of a GR00T config document (the --config file or a checkpoint's `config` metadata)
// that meshnn knows. The adapter (Config) and the action head (ActionHeadConfig) read different
// fields of one document, so each reader declares the whole set before its finish(): a key
// outside it is refused by both (io/config_reader.h), all unknown keys in one error.
#pragma once

#include "io/config_reader.h"

namespace meshnn::gr00t {

// root: the document; head: its action_head_cfg section, or the root itself for flat configs.
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
  // Upstream switches of what meshnn always runs: when present they must say so.
  head.require_if_present("add_pos_embed", true);
  head.require_if_present("use_vlln", true);
  // Upstream fields that do not change inference: training (tuning flags, the noise schedule of
  // the flow-matching loss, dropout) and dtype bookkeeping.
  head.allow({"model_dtype", "compute_dtype", "torch_dtype", "noise_s", "noise_beta_alpha",
              "noise_beta_beta"});
  for (const char* p : {"_", "tune_"}) head.allow_prefix(p);
  for (const char* section : {"diffusion_model_cfg", "vl_self_attention_cfg"}) {
    if (io::ConfigReader* s = head.child_if(section)) {
      s->allow({"num_layers", "num_attention_heads", "attention_head_dim", "ff_inner_dim",
                "cross_attention_dim", "interleave_self_attention", "attend_text_every_n_blocks"});
      // Upstream fields meshnn does not read (training-only dropout; the DiT's fixed norm, output
      // projection and position-embedding settings, which its wiring implements).
      s->allow({"dropout", "final_dropout", "norm_type", "output_dim", "positional_embeddings"});
    }
  }
  if (&root != &head) {
    // A nested document's top level: the HF model wrapper (backbone, architectures, dtypes) and
    // its copies of the head's sizes.
    root.allow({"action_head_cfg", "backbone_cfg", "architectures", "model_type", "gr00t_version",
                "torch_dtype", "transformers_version", "compute_dtype", "model_dtype", "action_dim",
                "action_horizon", "hidden_size"});
    root.allow_prefix("_");
  }
}

}  // namespace meshnn::gr00t
