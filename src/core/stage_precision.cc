#include "meshnn/core/stage_precision.h"

#include <algorithm>

#include "meshnn/core/error.h"
#include "meshnn/core/log.h"

namespace meshnn {

namespace {

bool is_mode(const std::string& s) {
  const std::vector<Precision>& m = all_precisions();
  return std::any_of(m.begin(), m.end(), [&](Precision p) { return s == precision_name(p); });
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

// bf16-safe: the measured split of docs/precision.md — the mel-VAE and the vocoder tolerate bf16,
// the BWE's generator is kept in fp32 (others measured it unusable in bf16).
//
// auto: bf16 only where it pays and keeps >= 50 dB. The stages set below are those whose bf16 run
// keeps >= 50 dB PSNR against fp32 in the measured table of docs/precision.md (`meshnn bench
// precision`: LTX-2.3 vae + vocoder, BigVGAN v2's vocoder; the BWE stays fp32), and only on a CPU
// with a native bf16 datapath (bf16_datapath_native): where bf16 is emulated it is slower than
// fp32, so auto is fp32 there. Every stage is optional (BigVGAN has only the vocoder), and a
// model with one precision for all layers (MiniMax-H3, not in the table) runs fp32.
struct Preset {
  const char* name;
  const char* doc;
  std::vector<std::pair<std::string, Precision>> stages;
  std::vector<std::string> optional;  // stages a model may lack (LTX-2 has no BWE)
  bool native_only = false;           // the stages apply only on a native bf16 datapath
};
const std::vector<Preset>& preset_table() {
  static const std::vector<Preset> t{
      {"bf16-safe",
       "vae=bf16,vocoder=bf16,bwe=fp32 (LTX decoders; LTX-2 has no bwe)",
       {{StagePrecision::kVae, Precision::bf16},
        {StagePrecision::kVocoder, Precision::bf16},
        {StagePrecision::kBwe, Precision::fp32}},
       {StagePrecision::kBwe}},
      {"auto",
       "vae=bf16,vocoder=bf16,bwe=fp32 for the stages a model has where the CPU runs bf16 "
       "natively (avx512_bf16), fp32 elsewhere and for MiniMax-H3",
       {{StagePrecision::kVae, Precision::bf16},
        {StagePrecision::kVocoder, Precision::bf16},
        {StagePrecision::kBwe, Precision::fp32}},
       {StagePrecision::kVae, StagePrecision::kVocoder, StagePrecision::kBwe},
       true}};
  return t;
}

std::string presets_text() {
  std::vector<std::string> names;
  for (const Preset& p : preset_table()) names.push_back(p.name);
  return join(names);
}

std::string expected_text() {
  return std::string("a mode (") + precision_names_text() + "), a preset (" + presets_text() +
         ") or stage=mode pairs such as vae=bf16,vocoder=bf16 (stages: " +
         join(StagePrecision::known_stages()) + ")";
}

}  // namespace

StagePrecision::StagePrecision(Precision every) : every_(every) {}

const std::vector<std::string>& StagePrecision::known_stages() {
  static const std::vector<std::string> s{kVae, kVocoder, kBwe};
  return s;
}

StagePrecision StagePrecision::parse(const std::string& text) {
  MESHNN_CHECK_AS(InvalidArgument, !text.empty(), "empty precision: expected ", expected_text());
  if (text.find('=') == std::string::npos) {
    if (is_mode(text)) return StagePrecision(parse_precision(text));
    for (const Preset& p : preset_table())
      if (text == p.name) {
        StagePrecision sp;
        sp.preset_ = p.name;
        sp.stages_ = p.stages;
        sp.optional_ = p.optional;
        sp.native_only_ = p.native_only;
        return sp;
      }
    throw InvalidArgument("unknown precision '" + text + "': expected " + expected_text());
  }
  StagePrecision sp;
  size_t b = 0;
  while (true) {
    const size_t e = std::min(text.find(',', b), text.size());
    const std::string entry = text.substr(b, e - b);
    const size_t eq = entry.find('=');
    MESHNN_CHECK_AS(InvalidArgument, eq != std::string::npos && eq > 0 && eq + 1 < entry.size(),
                    "precision '", text, "': entry '", entry,
                    "' is not stage=mode (a list names every entry's stage, e.g. "
                    "vae=bf16,vocoder=bf16; stages: ",
                    join(known_stages()), ")");
    const std::string stage = entry.substr(0, eq), mode = entry.substr(eq + 1);
    const auto& ks = known_stages();
    MESHNN_CHECK_AS(InvalidArgument, std::find(ks.begin(), ks.end(), stage) != ks.end(),
                    "precision '", text, "': unknown stage '", stage, "' (stages: ", join(ks), ")");
    for (const auto& [s, m] : sp.stages_)
      MESHNN_CHECK_AS(InvalidArgument, s != stage, "precision '", text, "': stage '", stage,
                      "' is given twice");
    MESHNN_CHECK_AS(InvalidArgument, is_mode(mode), "precision '", text,
                    "': unknown precision mode '", mode, "' for stage ", stage, " (expected ",
                    precision_names_text(), ")");
    sp.stages_.emplace_back(stage, parse_precision(mode));
    if (e == text.size()) break;
    b = e + 1;
  }
  return sp;
}

std::vector<Precision> StagePrecision::resolve(const std::vector<std::string>& stages,
                                               const std::string& model) const {
  return resolve(stages, model, bf16_datapath_native());
}

std::vector<Precision> StagePrecision::resolve(const std::vector<std::string>& stages,
                                               const std::string& model, bool native_bf16) const {
  std::vector<Precision> out(stages.size(), every_);
  if (native_only_ && !native_bf16) {
    log_info(detail::concat("precision ", str(), ": ", model,
                            " runs fp32 (bf16 would be emulated on this CPU: no avx512_bf16)"));
    return out;
  }
  for (const auto& [name, mode] : stages_) {
    const auto it = std::find(stages.begin(), stages.end(), name);
    if (it == stages.end()) {
      if (std::find(optional_.begin(), optional_.end(), name) != optional_.end()) continue;
      throw InvalidArgument(detail::concat("precision '", str(), "': ", model, " has no stage '",
                                           name, "' (its stages: ", join(stages), ")"));
    }
    out[static_cast<size_t>(it - stages.begin())] = mode;
  }
  if (native_only_) {
    std::string chosen;
    for (size_t i = 0; i < stages.size(); ++i)
      chosen += (i ? "," : "") + stages[i] + "=" + precision_name(out[i]);
    log_info(detail::concat("precision ", str(), ": ", model, " runs ", chosen,
                            " (native bf16 datapath)"));
  }
  return out;
}

Precision StagePrecision::uniform(const std::string& model) const {
  // auto: a single-precision model has no per-stage table (docs/precision.md), so fp32.
  if (native_only_) return Precision::fp32;
  MESHNN_CHECK_AS(InvalidArgument, is_uniform(), "precision '", str(), "': ", model,
                  " runs one precision for every layer; give a mode (", precision_names_text(),
                  ")");
  return every_;
}

std::string StagePrecision::str() const {
  if (!preset_.empty()) return preset_;
  if (stages_.empty()) return precision_name(every_);
  std::string out;
  for (const auto& [s, m] : stages_) out += (out.empty() ? "" : ",") + s + "=" + precision_name(m);
  return out;
}

}  // namespace meshnn
