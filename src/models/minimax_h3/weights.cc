#include "models/minimax_h3/weights.h"

#include <set>

#include "meshnn/core/error.h"
#include "models/audio_description.h"
#include "models/checkpoint_check.h"

namespace meshnn::models::minimax_h3 {

namespace {

void conv(std::map<std::string, Shape>& m, const std::string& p, int64_t co, int64_t ci, int64_t k,
          bool bias = true) {
  m[p + ".weight"] = {co, ci, k};
  if (bias) m[p + ".bias"] = {co};
}

void affine(std::map<std::string, Shape>& m, const std::string& p, int64_t d) {
  m[p + ".weight"] = {d};
  m[p + ".bias"] = {d};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::map<std::string, Shape> expected_tensors(const Config& cfg) {
  std::map<std::string, Shape> m;
  const int64_t D = cfg.latent_dim, C = cfg.latent_channels;
  conv(m, "encoder.block.0", cfg.encoder_dim, 1, 7);
  const int n = static_cast<int>(cfg.encoder_rates.size());
  for (int i = 1; i <= n; ++i) {
    const int64_t ci = cfg.encoder_width(i - 1), s = cfg.encoder_rates[i - 1];
    const std::string b = "encoder.block." + std::to_string(i) + ".block.";
    for (int u = 0; u < 3; ++u) {
      const std::string r = b + std::to_string(u) + ".block.";
      m[r + "0.alpha"] = {1, ci, 1};
      conv(m, r + "1", ci, ci, 7);
      m[r + "2.alpha"] = {1, ci, 1};
      conv(m, r + "3", ci, ci, 1);
    }
    m[b + "3.alpha"] = {1, ci, 1};
    conv(m, b + "4", 2 * ci, ci, 2 * s);
  }
  const int64_t cf = cfg.encoder_width(n);
  m["encoder.block." + std::to_string(n + 1) + ".alpha"] = {1, cf, 1};
  conv(m, "encoder.block." + std::to_string(n + 2), D, cf, 3);
  affine(m, "pre_block.norm1", D);
  affine(m, "pre_block.norm3", D);
  m["pre_block.attn.qkv.weight"] = {3 * D, D};
  m["pre_block.attn.q_bias"] = {D};
  m["pre_block.attn.zero_k_bias"] = {D};
  m["pre_block.attn.v_bias"] = {D};
  affine(m, "pre_block.norm2", C);
  affine(m, "pre_block.mlp.norm", C);
  m["pre_block.attn.proj.weight"] = {C, C};
  m["pre_block.attn.proj.bias"] = {C};
  m["pre_block.proj.weight"] = {C, D};
  m["pre_block.proj.bias"] = {C};
  for (const char* w : {"w0", "w1"}) {
    m[std::string("pre_block.mlp.") + w + ".weight"] = {2 * C, C};
    m[std::string("pre_block.mlp.") + w + ".bias"] = {2 * C};
  }
  m["pre_block.mlp.w2.weight"] = {C, 2 * C};
  m["pre_block.mlp.w2.bias"] = {C};
  conv(m, "mean_proj", C, C, 1);
  conv(m, "logs_proj", C, C, 1);
  conv(m, "dec_in_proj", D, C, 1);
  for (const auto& [k, s] : required_shapes(describe_generator(cfg.generator(), "decoder."), true))
    m[k] = s;
  return m;
}

std::vector<std::string> check_tensors(const Config& cfg,
                                       const std::map<std::string, TensorInfo>& tensors) {
  std::vector<std::string> missing, wrong, unknown, other;
  // The file's keys in the folded spelling: a weight-norm pair becomes `<prefix>.weight` with v's
  // shape, after checking that g is (shape[0], 1, …, 1).
  std::map<std::string, Shape> folded;
  std::set<std::string> pair_done, incomplete;
  static const std::vector<std::pair<std::string, std::string>> pairs = {
      {".weight_g", ".weight_v"},
      {".parametrizations.weight.original0", ".parametrizations.weight.original1"}};
  for (const auto& [k, info] : tensors) {
    if (info.dtype != DType::f32 && info.dtype != DType::bf16 && info.dtype != DType::f16)
      other.push_back("'" + k + "' is " + dtype_name(info.dtype) + " (expected f32, bf16 or f16)");
    bool is_pair = false;
    for (const auto& [gs, vs] : pairs) {
      const bool is_g = ends_with(k, gs), is_v = ends_with(k, vs);
      if (!is_g && !is_v) continue;
      is_pair = true;
      const std::string prefix = k.substr(0, k.size() - (is_g ? gs : vs).size());
      if (!pair_done.insert(prefix + gs).second) break;
      auto g = tensors.find(prefix + gs), v = tensors.find(prefix + vs);
      if (g == tensors.end() || v == tensors.end()) {
        other.push_back("'" + k + "' without '" + prefix + (is_g ? vs : gs) + "'");
        incomplete.insert(prefix + ".weight");  // reported once, not also as missing
        break;
      }
      Shape gshape(v->second.shape.size(), 1);
      if (!gshape.empty()) gshape[0] = v->second.shape[0];
      if (g->second.shape != gshape && g->second.shape != Shape{gshape.empty() ? 0 : gshape[0]})
        wrong.push_back("'" + prefix + gs + "' has shape " + shape_str(g->second.shape) +
                        ", expected " + shape_str(gshape));
      if (folded.count(prefix + ".weight"))
        other.push_back("'" + prefix + "' has its weight stored twice");
      folded[prefix + ".weight"] = v->second.shape;
      break;
    }
    if (is_pair) continue;
    if (folded.count(k)) {
      other.push_back("'" + k + "' is also stored weight-normed");
      continue;
    }
    folded[k] = info.shape;
  }
  const std::map<std::string, Shape> expected = expected_tensors(cfg);
  for (const auto& [k, s] : expected)
    if (!folded.count(k) && !incomplete.count(k)) missing.push_back("'" + k + "' " + shape_str(s));
  for (const auto& [k, s] : folded) {
    auto it = expected.find(k);
    if (it == expected.end())
      unknown.push_back("'" + k + "' " + shape_str(s));
    else if (it->second != s)
      wrong.push_back("'" + k + "' has shape " + shape_str(s) + ", expected " +
                      shape_str(it->second));
  }
  std::vector<std::string> all;
  auto add = [&](const char* what, const std::vector<std::string>& items) {
    for (const std::string& s : items) all.push_back(std::string(what) + ": " + s);
  };
  add("missing", missing);
  add("wrong shape", wrong);
  add("unknown to this config", unknown);
  add("invalid", other);
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
