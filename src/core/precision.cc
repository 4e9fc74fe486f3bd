#include "meshnn/core/precision.h"

#include "core/enum_names.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/error.h"

namespace meshnn {

namespace {
// The one table of mode names.
constexpr EnumNames<Precision, 4> kModeNames{"precision mode",
                                             {{Precision::fp32, "fp32"},
                                              {Precision::bf16, "bf16"},
                                              {Precision::bf16x2, "bf16x2"},
                                              {Precision::bf16x3, "bf16x3"}}};
}  // namespace

const std::vector<Precision>& all_precisions() {
  static const std::vector<Precision> v = kModeNames.values();
  return v;
}

const char* precision_name(Precision p) { return kModeNames.name(p); }

std::string precision_names_text() { return kModeNames.list_text(); }

Precision parse_precision(const std::string& s) { return kModeNames.parse(s); }

bool bf16_datapath_native() { return cpu_features().avx512_bf16; }

}  // namespace meshnn
