#include "models/checkpoint_check.h"

#include "meshnn/core/error.h"
#include "meshnn/core/log.h"
#include "models/audio_description.h"

namespace meshnn::models {

CheckpointReport check_ltx_checkpoint(const LtxAudioConfig& cfg,
                                      const std::map<std::string, Shape>& tensors) {
  CheckpointReport r;
  const ModelDesc desc = describe_ltx(cfg);
  const std::map<std::string, Shape> required = required_shapes(desc);
  const std::map<std::string, Shape> known = required_shapes(desc, true);  // + optional
  for (const auto& [k, shape] : required)
    if (!tensors.count(k)) r.missing.push_back("'" + k + "' " + shape_str(shape));
  for (const auto& [k, shape] : tensors) {
    auto it = known.find(k);
    if (it != known.end()) {
      if (shape != it->second)
        r.wrong_shape.push_back("'" + k + "' has shape " + shape_str(shape) + ", expected " +
                                shape_str(it->second));
    } else if (is_ltx_audio_key(k) && !is_ltx_encoder_key(k)) {
      r.unused.push_back("'" + k + "' " + shape_str(shape));
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

void require_ltx_checkpoint(const LtxAudioConfig& cfg, const std::map<std::string, Shape>& tensors,
                            const CheckpointCheckOptions& opt, const std::string& where) {
  const CheckpointReport r = check_ltx_checkpoint(cfg, tensors);
  if (r.problems(opt) == 0) {
    if (!r.unused.empty())
      log_warn(detail::concat(
          where, ": ", r.unused.size(),
          " tensor(s) under audio_vae. / vocoder. that no layer uses (allowed): ", r.unused.front(),
          r.unused.size() > 1 ? ", …" : ""));
    return;
  }
  std::string msg =
      detail::concat(where, ": ", r.problems(opt), " checkpoint key problem(s) for this config:");
  append_problem_list(msg, "missing", r.missing);
  append_problem_list(msg, "with the wrong shape", r.wrong_shape);
  if (!opt.allow_unused_audio_tensors) {
    append_problem_list(msg,
                        "unused by every layer (the config and the weights disagree; "
                        "--allow-unused-tensors accepts them)",
                        r.unused);
  }
  throw WeightError(msg);
}

}  // namespace meshnn::models
