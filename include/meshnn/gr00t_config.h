// The types of the GR00T API (meshnn/gr00t.h): the N1.5 / N1.6 / N1.7 version configs (adapter
// and action head), the static slot layout, the adapter's plan, the load options and the
// adapter's outputs. The adapter and action head themselves are internal (src/models/gr00t/).
//
// Dims per version, key sets, the hoist and the state encoder: docs/gr00t.md. Everything here is
// host-side and validated before any compute.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"

namespace meshnn::gr00t {

enum class Version { n1_5, n1_6, n1_7 };
const char* version_name(Version v);  // "n1.5" | "n1.6" | "n1.7"
// Accepts "n1.5", "N1.5", "n1d5", "gr00t_n1_5" (and the same for 1.6 / 1.7).
Version parse_version(const std::string& s);

// Which key set the cross blocks read: N1.5 `DiT` attends every token ("all"); N1.6 / N1.7
// `AlternateVLDiT` alternates the non-image ("text") and image ("image") tokens.
enum class CrossKeySets { all, text_image };

struct VlAdapterConfig {
  int64_t dim = 2048;  // backbone_embedding_dim of vlln and VL-SA
  double vlln_eps = 1e-5;
  int n_blocks = 4;  // VL self-attention layers (0 for N1.6)
  int64_t n_heads = 32;
  int64_t head_dim = 64;
  int64_t ff_dim = 8192;  // diffusers FeedForward inner dim = 4 · dim
  double ln_eps = 1e-5;
  std::string activation = "gelu_tanh";  // "gelu-approximate"
};

struct DitConfig {
  int n_layers = 16;
  int64_t n_heads = 32;
  int64_t head_dim = 48;
  int64_t cross_attention_dim = 2048;
  bool interleave_self_attention = true;
  int attend_text_every_n_blocks = 2;
  CrossKeySets key_sets = CrossKeySets::all;

  int64_t inner_dim() const { return n_heads * head_dim; }
  // Even block indices (odd ones are self-attention blocks when interleaving).
  std::vector<int> cross_block_indices() const;
  // "all" | "text" | "image" for cross block i (i % (2·n) == 0 → text, else image).
  std::string key_set(int block) const;
};

struct StateEncoderConfig {
  int64_t max_state_dim = 64;
  int64_t state_dim_pad = 64;  // multiple of the row block, ≥ max_state_dim
  int64_t hidden_size = 1024;
  int64_t input_embedding_dim = 1536;
  int num_embodiments = 32;
};

struct Config {
  Version version = Version::n1_5;
  int64_t backbone_embedding_dim = 2048;
  VlAdapterConfig vl;
  DitConfig dit;
  StateEncoderConfig state;
  // Static-shape granule (32 rows): S_pad, L_pad and state_dim_pad are multiples.
  int64_t row_block = 32;
  // The backbone LLM layer the features come from (upstream select_layer; 0 = not given). The
  // backbone runs outside meshnn: recorded so that a caller can check its features against it.
  int select_layer = 0;

  // The released checkpoints' values (checkpoint values win over code defaults).
  static Config defaults(Version v);
  // Overrides `defaults(v)` with the fields present in an Isaac-GR00T style config (top level or
  // under "action_head_cfg"): backbone_embedding_dim, max_state_dim, hidden_size,
  // input_embedding_dim, max_num_embodiments, use_vl_self_attention, vl_self_attention_cfg
  // {num_layers, num_attention_heads, attention_head_dim, ff_inner_dim}, diffusion_model_cfg
  // {num_layers, num_attention_heads, attention_head_dim, cross_attention_dim,
  // interleave_self_attention, attend_text_every_n_blocks}, and meshnn's state_dim_pad,
  // row_block. A "model_type" / "gr00t_version" / "architectures" naming another version is an
  // InvalidArgument; so is an unknown field (unless read under AllowUnknownConfig) and an
  // upstream architecture field that contradicts the model (use_alternate_vl_dit against the
  // version, state_history_length ≠ 1, DiT output_dim / cross_attention_dim against the head's
  // dims, a backbone projection to another width). The accepted fields: docs/gr00t.md.
  static Config from_json(const std::string& json_text, Version v);
  // from_json on the text of the file at `path` (a regular file; errors name the path).
  static Config from_json_file(const std::string& path, Version v);
  // Checkpoint metadata wins: key "config" (JSON as above) and "gr00t_version" (checked).
  static Config from_metadata(const std::map<std::string, std::string>& metadata, Version v);
  std::string to_json() const;
  // Internal consistency (dims agree, version structure); InvalidArgument naming the field.
  void validate() const;
};

// --------------------------------------------------------------------------------------------
// Static slot layout
// --------------------------------------------------------------------------------------------

// Token types of the CLI's --token-types: 0 = text (non-image, attended), 1 = image,
// 2 = padding (backbone_attention_mask 0: in no text/image key set, still a VL-SA key and an
// "all" key, as upstream N1.5 masks nothing).
enum class TokenType : uint8_t { text = 0, image = 1, padding = 2 };

using Run = std::pair<int64_t, int64_t>;  // slot range [begin, end)

class SlotLayout {
 public:
  SlotLayout() = default;
  // General form: token t sits in slot slot_of_token[t] (distinct, < s_pad); s_pad a multiple of
  // row_block. InvalidArgument naming the field otherwise.
  SlotLayout(std::vector<int64_t> slot_of_token, std::vector<TokenType> types, int64_t s_pad,
             int64_t row_block);
  // Token t in slot t, S_pad = S rounded up to row_block (pad slots at the end).
  static SlotLayout from_token_types(const std::vector<int>& types, int64_t row_block = 32);
  // types: (S) or (1, S) tensor of integers 0 / 1 / 2 (any integer or float dtype).
  static SlotLayout from_token_types(const Tensor& types, int64_t row_block = 32);

  int64_t seq_len() const { return static_cast<int64_t>(slot_of_token_.size()); }
  int64_t s_pad() const { return s_pad_; }
  int64_t row_block() const { return row_block_; }
  const std::vector<int64_t>& slot_of_token() const { return slot_of_token_; }
  const std::vector<TokenType>& token_types() const { return types_; }
  // (S_pad) bytes, 1 where a slot holds a token: the VL-SA key-valid mask.
  std::vector<uint8_t> key_valid() const;
  Tensor key_valid_mask() const;  // the same as a (S_pad) u8 tensor (the per-call vl_mask)
  // Last occupied slot + 1: slots at or beyond never hold a token (the VL-SA skips them).
  int64_t active_slots() const;
  // Maximal runs of slots holding image tokens / text tokens, in slot order.
  std::vector<Run> image_runs() const;
  std::vector<Run> text_runs() const;

  // Key set → (L_real, L_pad): "all" = (S_pad, S_pad) (identity, the pads hidden by the DiT's
  // mask); "text" / "image" = (tokens in the set, rounded up to row_block, at least one block).
  std::pair<int64_t, int64_t> key_set_lengths(const std::string& key_set) const;
  // [L_real] slot index of key set rows (row r of vl_sets[key_set] is slot index[r]).
  std::vector<int64_t> gather_index(const std::string& key_set) const;
  // (L_pad, S_pad) f32 0/1 matrix P with P[r, index[r]] = 1 for r < L_real, zero rows after.
  Tensor onehot_gather_matrix(const std::string& key_set) const;

  // (1, S, D) or (S, D) token rows → (1, 1, S_pad, D) in the slot layout, pad slots zero.
  Tensor rows_to_slots(const Tensor& x) const;
  // (1, 1, S_pad, D) | (1, S_pad, D) | (S_pad, D) → (1, S, D) in token order.
  Tensor slots_to_rows(const Tensor& x) const;

 private:
  std::vector<int64_t> slot_of_token_;
  std::vector<TokenType> types_;
  std::vector<int8_t> slot_type_;  // per slot: −1 empty, else the TokenType
  int64_t s_pad_ = 0;
  int64_t row_block_ = 32;
};

// --------------------------------------------------------------------------------------------
// Plan
// --------------------------------------------------------------------------------------------

enum class GatherMode { splice, onehot };
const char* gather_mode_name(GatherMode g);
GatherMode parse_gather_mode(const std::string& s);

struct AdapterOptions {
  GatherMode gather_mode = GatherMode::splice;
  // VL-SA projections and feed-forward: fp32 | bf16 (bf16 operands, f32 accumulation).
  Precision precision = Precision::fp32;
  // The hoist projection vl_set·Wkv + bkv. fp32 keeps full-accuracy K/V
  // (PCC ≥ 0.9999 gate); bf16 lowers it like the rest.
  Precision hoist_precision = Precision::fp32;
  // State encoder (the seed runs it at HiFi4 too).
  Precision state_precision = Precision::fp32;
  bool collect_taps = false;
  // Head-parallel: the mesh axis whose devices split the attention heads (VL-SA and the hoisted
  // DiT K/V) when the adapter is built with a Device.
  int mesh_axis = 1;
};

struct KeySetPlan {
  std::string name;
  std::vector<Run> runs;
  int64_t l_real = 0, l_pad = 0;
  bool identity = false;      // "all": vl itself, no gather
  bool mask_present = false;  // the DiT must hide rows ≥ L_real (or the pad slots)
};

struct HoistBlockPlan {
  int block = 0;
  std::string key_set;
  int64_t l_pad = 0;
};

// The checkpoint prefix of Isaac-GR00T's action head ("action_head.").
std::string default_weight_prefix();

struct AdapterPlan {
  Config config;
  SlotLayout layout;
  AdapterOptions options;
  int64_t s_pad = 0, s_active = 0, dim = 0;
  int n_vlsa = 0;
  float vlsa_scale = 0;
  int64_t n_heads = 0, head_dim = 0, kv_width = 0;  // DiT heads (no 48 → 64 padding on CPU)
  std::map<std::string, KeySetPlan> key_sets;
  std::vector<HoistBlockPlan> blocks;
  std::vector<int64_t> hoist_lengths;
  bool vl_mask_present = false;
  std::string weight_prefix = default_weight_prefix();
  // Head-parallel split (1 / 0 on one device): tp devices along options.mesh_axis, this one has
  // index tp_rank and owns VL-SA heads [tp_rank·vl_heads/tp, …) and DiT heads
  // [tp_rank·n_heads/tp, …); m_rows = the VL-SA row count (s_active rounded up to tp, so the
  // reduce-scatter splits it evenly).
  int tp = 1, tp_rank = 0;
  int64_t m_rows = 0;

  // (Built and checked by build_adapter_plan, src/models/gr00t/adapter.h.)
  std::vector<std::string> gathered_sets() const;
  std::string describe() const;  // JSON
};

// What the VL adapter gives the action head for one observation.
struct AdapterOutputs {
  Tensor vl;                              // (1, 1, S_pad, D) dit_encoder_hidden_states slots
  std::map<std::string, Tensor> vl_sets;  // key set → (1, 1, L_pad, D); "all" is vl itself
  // cross block → (K, V), the persistent buffers; head-parallel: this device's heads only,
  // (1, Nh/tp, L_pad, Dh), heads [tp_rank·Nh/tp, …)
  std::map<int, std::pair<Tensor, Tensor>> kv;
  Tensor state_features;               // (1, 1, out) when a state was given
  std::map<std::string, Tensor> taps;  // collect_taps only; slot-layout tensors
};

// --------------------------------------------------------------------------------------------
// Action head
// --------------------------------------------------------------------------------------------

// Head dims beyond the adapter's Config (reference §1; checkpoint values over code defaults).
struct ActionHeadConfig {
  int64_t action_dim = 32;      // A: max_action_dim / action_dim
  int64_t action_horizon = 16;  // T
  int64_t future_tokens = 32;   // F: num_target_vision_tokens (N1.5 only, else 0)
  int64_t max_seq_len = 1024;   // position-embedding rows
  int num_steps = 4;            // num_inference_timesteps (default of get_action)
  int num_buckets = 1000;       // num_timestep_buckets

  static ActionHeadConfig defaults(Version v);
  // Fields read (top level or under "action_head_cfg"): action_dim | max_action_dim,
  // action_horizon, num_target_vision_tokens, max_seq_len, num_inference_timesteps,
  // num_timestep_buckets. Missing fields keep the version's defaults.
  static ActionHeadConfig from_json(const std::string& json_text, Version v);
  // from_json on the file at `path` (errors name the path).
  static ActionHeadConfig from_json_file(const std::string& path, Version v);
  static ActionHeadConfig from_metadata(const std::map<std::string, std::string>& metadata,
                                        Version v);
  std::string to_json() const;
};

struct ActionHeadOptions {
  // Every head GEMM (DiT, encoder, decoder, t-only projections): fp32 | bf16 (bf16 operands, f32
  // accumulation). The residual stream, norms, softmax and the Euler state stay f32.
  Precision precision = Precision::fp32;
  // Head-parallel: the mesh axis whose devices split the DiT heads and FF columns (the same
  // axis as the adapter's, so each device reads the K/V of its own heads).
  int mesh_axis = 1;
};

// The whole policy after the backbone: adapter + action head on one device (or SPMD over a mesh
// axis). Validates every input before any compute.
struct PolicyOptions {
  AdapterOptions adapter;  // its mesh_axis is used for both
  ActionHeadOptions head;
};

}  // namespace meshnn::gr00t
