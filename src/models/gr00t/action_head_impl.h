// The GR00T action head's state shared by its files: DiT block layers, embodiment encoder slices,
// per-timestep caches, and ActionHead::Impl (layers, plan figures, scratch).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/mlp.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/action_head.h"

namespace meshnn::gr00t {

namespace head_detail {
// Whether every value of t is finite (any dtype).
bool all_finite(const Tensor& t);
}  // namespace head_detail

using layers::Linear;

struct DitBlock {
  int index = 0;
  bool cross = false;
  std::string key_set;
  Linear ada;       // norm1.linear (2D ← D), replicated: t-only
  Linear q;         // to_q, this device's heads (Dl ← D)
  Linear kv;        // self blocks: [to_k; to_v] of this device's heads (2·Dl ← D)
  Linear out;       // to_out.0 columns of this device's heads (D ← Dl), no bias
  Linear ff1, ff2;  // FF1 columns (Fl ← D) + GELU, FF2 rows (D ← Fl), no bias
  Tensor bo, b2;    // (D) biases added once after the reduction
};

struct EncoderSlice {
  Linear w1, w2a, w2t, w3;  // W1 (D ← A), W2 rows 0…D−1 (D ← D), W2 rows D…2D−1 + b2, W3
};

struct Bucket {
  std::vector<Tensor> mod;         // per block (2D): scale | shift
  Tensor out_mod;                  // (2D): shift | scale
  std::map<int, Tensor> enc_time;  // embodiment → (D) τ(t)·W2[e][D:] + b2[e]
};

// A cross block's view of the adapter's K/V (this device's heads) and its key set's valid rows.
struct CrossKv {
  const float *k, *v;
  int64_t L;
  std::vector<uint8_t> valid;
};

struct ActionHead::Impl {
  Config cfg;
  ActionHeadConfig hc;
  ActionHeadOptions opt;
  Device* device = nullptr;
  int tp = 1, rank = 0;
  int64_t D = 0, O = 0, A = 0, T = 0, F = 0, N = 0, heads_local = 0, dh = 0, ff_local = 0;
  float scale = 1.f;
  layers::LayerNorm ln5, ln6;  // non-affine, eps 1e-5 (blocks) / 1e-6 (norm_out)
  Linear t_lin1, t_lin2, proj_out_1, proj_out_2;
  std::vector<DitBlock> blocks;
  Tensor w1, b1, w2, b2, w3, b3;  // action encoder (E, …) f32
  std::map<int, EncoderSlice> enc;
  layers::CategorySpecificMlp decoder;
  Tensor pos, future;  // (T, D), (F, D)
  std::map<int, Bucket> buckets;
  ActionHeadStats stats;
  // scratch
  Tensor h, x, qb, kvb, att, part, hid, scores, y;

  Precision prec() const { return opt.precision; }

  // part (M, D) partial sums → summed over the axis group (reduce-scatter + all-gather on the
  // feature dim, so any row count works); then dst += sum + bias.
  void reduce_add(const Tensor& p, int64_t M, float* dst, const float* bias);

  Bucket& bucket(int t);
  EncoderSlice& encoder(int e);
  const Tensor& enc_time(Bucket& b, int t, int e);

  // Cross blocks: the adapter's K/V and valid keys per block index (checked against the plan).
  std::map<int, CrossKv> cross_kv(const AdapterOutputs& adapter, const AdapterPlan& plan) const;
  // h (N, D) ← [state features | future tokens | action encoder(x_k, t) + position rows]; xa:
  // the Euler state (T, A); a1, a2: (T, D) scratch.
  void fill_rows(EncoderSlice& es, Bucket& bk, int t, int embodiment, const float* xa,
                 const Tensor& sf, Tensor& a1, Tensor& a2);
  // h (N, D) rows → y (T, O): every DiT block, then the output head on the last T rows.
  void run_dit(const Bucket& bk, const std::map<int, CrossKv>& ckv);
};

}  // namespace meshnn::gr00t
