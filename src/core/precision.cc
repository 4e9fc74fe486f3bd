#include "meshnn/core/precision.h"

#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn {

namespace {
struct ModeName {
  Precision mode;
  const char* name;
};
// The one table of mode names.
constexpr ModeName kModeNames[] = {{Precision::fp32, "fp32"},
                                   {Precision::bf16, "bf16"},
                                   {Precision::bf16x2, "bf16x2"},
                                   {Precision::bf16x3, "bf16x3"}};
}  // namespace

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> v = [] {
    std::vector<Precision> out;
    for (const ModeName& m : kModeNames) out.push_back(m.mode);
    return out;
  }();
  return v;
}

const char* precision_name(Precision p) {
  for (const ModeName& m : kModeNames)
    if (m.mode == p) return m.name;
  return "?";
}

std::string precision_names_text() {
  std::string out;
  const size_t n = std::size(kModeNames);
  for (size_t i = 0; i < n; ++i)
    out += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + kModeNames[i].name;
  return out;
}

Precision parse_precision(const std::string& s) {
  for (const ModeName& m : kModeNames)
    if (s == m.name) return m.mode;
  throw InvalidArgument("unknown precision mode '" + s + "' (expected " + precision_names_text() +
                        ")");
}

bool bf16_datapath_native() { return cpu_features().avx512_bf16; }

}  // namespace meshnn
