#include "models/common/checkpoint_check.h"

#include <set>

#include "meshnn/core/error.h"
#include "meshnn/core/log.h"
#include "meshnn/layers/state_dict.h"
#include "models/common/audio_description.h"

namespace meshnn::models {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string listed(const std::string& k, const Shape& s) { return "'" + k + "' " + shape_str(s); }

}  // namespace

TensorSetReport check_tensor_set(const std::map<std::string, Shape>& expected,
                                 const std::map<std::string, Shape>& tensors,
                                 const TensorSetRules& rules) {
  TensorSetReport r;
  // The file's keys in the folded spelling: a weight-norm pair becomes `<prefix>.weight` with v's
  // shape, after checking that g is (shape[0], 1, …, 1).
  std::map<std::string, Shape> folded;
  std::set<std::string> pair_done, incomplete;
  // Each spelling as key suffixes ("." + g, "." + v).
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const WeightNormNames& n : weight_norm_names()) pairs.emplace_back("." + n.g, "." + n.v);
  for (const auto& [k, shape] : tensors) {
    bool is_pair = false;
    for (const auto& [gs, vs] : pairs) {
      const bool is_g = ends_with(k, gs), is_v = ends_with(k, vs);
      if (!is_g && !is_v) continue;
      is_pair = true;
      const std::string prefix = k.substr(0, k.size() - (is_g ? gs : vs).size());
      if (!pair_done.insert(prefix + gs).second) break;
      auto g = tensors.find(prefix + gs), v = tensors.find(prefix + vs);
      if (g == tensors.end() || v == tensors.end()) {
        r.invalid.push_back("'" + k + "' without '" + prefix + (is_g ? vs : gs) + "'");
        incomplete.insert(weight_key(prefix));  // reported once, not also as missing
        break;
      }
      Shape gshape(v->second.size(), 1);
      if (!gshape.empty()) gshape[0] = v->second[0];
      if (g->second != gshape && g->second != Shape{gshape.empty() ? 0 : gshape[0]})
        r.wrong_shape.push_back("'" + prefix + gs + "' has shape " + shape_str(g->second) +
                                ", expected " + shape_str(gshape));
      if (folded.count(weight_key(prefix)))
        r.invalid.push_back("'" + prefix + "' has its weight stored twice");
      folded[weight_key(prefix)] = v->second;
      break;
    }
    if (is_pair) continue;
    if (folded.count(k)) {
      r.invalid.push_back("'" + k + "' is also stored weight-normed");
      continue;
    }
    folded[k] = shape;
  }
  for (const auto& [k, s] : expected)
    if (!folded.count(k) && !incomplete.count(k) && !(rules.optional && rules.optional(k)))
      r.missing.push_back(listed(k, s));
  for (const auto& [k, s] : folded) {
    auto it = expected.find(k);
    if (it == expected.end()) {
      if (!rules.ours || rules.ours(k)) r.unknown.push_back(listed(k, s));
    } else if (it->second != s) {
      r.wrong_shape.push_back("'" + k + "' has shape " + shape_str(s) + ", expected " +
                              shape_str(it->second));
    }
  }
  return r;
}

void append_problem_list(std::string& msg, const char* title,
                         const std::vector<std::string>& items) {
  if (items.empty()) return;
  msg += detail::concat("\n  ", items.size(), " ", title, ":");
  for (size_t i = 0; i < items.size() && i < 25; ++i) msg += "\n    " + items[i];
  if (items.size() > 25) msg += detail::concat("\n    … and ", items.size() - 25, " more");
}

void require_bigvgan_checkpoint(const GeneratorConfig& cfg, const std::string& prefix,
                                const std::map<std::string, Shape>& tensors,
                                const std::string& where) {
  const ModelDesc desc = describe_generator(cfg, prefix);
  const std::map<std::string, Shape> required = required_shapes(desc);
  // The generator's modules: the first key component (below the prefix) of any of its tensors.
  std::set<std::string> modules;
  for (const auto& [k, s] : required)
    modules.insert(k.substr(prefix.size(), k.find('.', prefix.size()) - prefix.size()));
  TensorSetRules rules;
  rules.ours = [&](const std::string& k) {
    return k.rfind(prefix, 0) == 0 &&
           modules.count(k.substr(prefix.size(), k.find('.', prefix.size()) - prefix.size()));
  };
  rules.optional = [&](const std::string& k) { return !required.count(k); };  // the filters
  const TensorSetReport r = check_tensor_set(required_shapes(desc, true), tensors, rules);
  const size_t n = r.missing.size() + r.wrong_shape.size() + r.unknown.size() + r.invalid.size();
  if (n == 0) return;
  std::string msg = detail::concat(where, ": ", n, " checkpoint key problem(s) for this config:");
  append_problem_list(msg, "missing", r.missing);
  append_problem_list(msg, "with the wrong shape", r.wrong_shape);
  append_problem_list(msg, "unused by every layer (the config and the weights disagree)",
                      r.unknown);
  append_problem_list(msg, "invalid", r.invalid);
  throw WeightError(msg);
}

}  // namespace meshnn::models
