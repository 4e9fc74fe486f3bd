#include "models/minimax_h3/weights.h"

#include "meshnn/core/error.h"
#include "meshnn/layers/state_dict.h"
#include "models/common/audio_description.h"
#include "models/common/checkpoint_check.h"

namespace meshnn::models::minimax_h3 {

namespace keys {
namespace {
std::string enc(int i) { return "encoder.block." + std::to_string(i); }
std::string unit(int i, int u) { return enc(i) + ".block." + std::to_string(u) + ".block."; }
}  // namespace
std::string conv_in() { return enc(0); }
std::string unit_alpha(int i, int u, int j) { return unit(i, u) + (j == 0 ? "0" : "2") + ".alpha"; }
std::string unit_conv(int i, int u, int j) { return unit(i, u) + (j == 0 ? "1" : "3"); }
std::string stage_alpha(int i) { return enc(i) + ".block.3.alpha"; }
std::string stage_conv(int i) { return enc(i) + ".block.4"; }
std::string final_alpha(const Config& cfg) {
  return enc(static_cast<int>(cfg.encoder_rates.size()) + 1) + ".alpha";
}
std::string conv_out(const Config& cfg) {
  return enc(static_cast<int>(cfg.encoder_rates.size()) + 2);
}
std::string mean_proj() { return "mean_proj"; }
std::string logs_proj() { return "logs_proj"; }
std::string dec_in_proj() { return "dec_in_proj"; }
std::string decoder() { return "decoder."; }
std::string pre_block() { return "pre_block."; }
std::string norm1() { return "norm1"; }
std::string norm2() { return "norm2"; }
std::string norm3() { return "norm3"; }
std::string mlp_norm() { return "mlp.norm"; }
std::string qkv() { return "attn.qkv"; }
std::string q_bias() { return "attn.q_bias"; }
std::string zero_k_bias() { return "attn.zero_k_bias"; }
std::string v_bias() { return "attn.v_bias"; }
std::string attn_proj() { return "attn.proj"; }
std::string proj() { return "proj"; }
std::string mlp_w(int j) { return "mlp.w" + std::to_string(j); }
}  // namespace keys

namespace {

void conv(std::map<std::string, Shape>& m, const std::string& p, int64_t co, int64_t ci,
          int64_t k) {
  m[weight_key(p)] = {co, ci, k};
  m[bias_key(p)] = {co};
}

void affine(std::map<std::string, Shape>& m, const std::string& p, int64_t d) {
  m[weight_key(p)] = {d};
  m[bias_key(p)] = {d};
}

void linear(std::map<std::string, Shape>& m, const std::string& p, int64_t out, int64_t in) {
  m[weight_key(p)] = {out, in};
  m[bias_key(p)] = {out};
}

}  // namespace

std::map<std::string, Shape> expected_tensors(const Config& cfg) {
  std::map<std::string, Shape> m;
  const int64_t D = cfg.latent_dim, C = cfg.latent_channels;
  conv(m, keys::conv_in(), cfg.encoder_dim, 1, 7);
  const int n = static_cast<int>(cfg.encoder_rates.size());
  for (int i = 1; i <= n; ++i) {
    const int64_t ci = cfg.encoder_width(i - 1), s = cfg.encoder_rates[i - 1];
    for (int u = 0; u < 3; ++u) {
      m[keys::unit_alpha(i, u, 0)] = {1, ci, 1};
      conv(m, keys::unit_conv(i, u, 0), ci, ci, 7);
      m[keys::unit_alpha(i, u, 1)] = {1, ci, 1};
      conv(m, keys::unit_conv(i, u, 1), ci, ci, 1);
    }
    m[keys::stage_alpha(i)] = {1, ci, 1};
    conv(m, keys::stage_conv(i), 2 * ci, ci, 2 * s);
  }
  const int64_t cf = cfg.encoder_width(n);
  m[keys::final_alpha(cfg)] = {1, cf, 1};
  conv(m, keys::conv_out(cfg), D, cf, 3);
  const std::string pb = keys::pre_block();
  affine(m, pb + keys::norm1(), D);
  affine(m, pb + keys::norm3(), D);
  m[weight_key(pb + keys::qkv())] = {3 * D, D};
  m[pb + keys::q_bias()] = {D};
  m[pb + keys::zero_k_bias()] = {D};
  m[pb + keys::v_bias()] = {D};
  affine(m, pb + keys::norm2(), C);
  affine(m, pb + keys::mlp_norm(), C);
  linear(m, pb + keys::attn_proj(), C, C);
  linear(m, pb + keys::proj(), C, D);
  linear(m, pb + keys::mlp_w(0), 2 * C, C);
  linear(m, pb + keys::mlp_w(1), 2 * C, C);
  linear(m, pb + keys::mlp_w(2), C, 2 * C);
  conv(m, keys::mean_proj(), C, C, 1);
  conv(m, keys::logs_proj(), C, C, 1);
  conv(m, keys::dec_in_proj(), D, C, 1);
  for (const auto& [k, s] :
       required_shapes(describe_generator(cfg.generator(), keys::decoder()), true))
    m[k] = s;
  return m;
}

std::vector<std::string> check_tensors(const Config& cfg,
                                       const std::map<std::string, TensorInfo>& tensors) {
  std::vector<std::string> dtypes;
  std::map<std::string, Shape> shapes;
  for (const auto& [k, info] : tensors) {
    if (info.dtype != DType::f32 && info.dtype != DType::bf16 && info.dtype != DType::f16)
      dtypes.push_back("'" + k + "' is " + dtype_name(info.dtype) + " (expected f32, bf16 or f16)");
    shapes.emplace(k, info.shape);
  }
  const TensorSetReport r = check_tensor_set(expected_tensors(cfg), shapes);
  std::vector<std::string> all;
  auto add = [&](const char* what, const std::vector<std::string>& items) {
    for (const std::string& s : items) all.push_back(std::string(what) + ": " + s);
  };
  add("missing", r.missing);
  add("wrong shape", r.wrong_shape);
  add("unknown to this config", r.unknown);
  add("invalid", dtypes);
  add("invalid", r.invalid);
  return all;
}

void require_tensors(const Config& cfg, const std::map<std::string, TensorInfo>& tensors,
                     const std::string& where) {
  const std::vector<std::string> problems = check_tensors(cfg, tensors);
  if (problems.empty()) return;
  std::string msg =
      detail::concat(where, ": ", problems.size(), " checkpoint key problem(s) for this config:");
  append_problem_list(msg, "problems", problems);
  throw WeightError(msg);
}

}  // namespace meshnn::models::minimax_h3
