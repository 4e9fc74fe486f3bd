#include "meshnn/core/precision.h"

#include "meshnn/core/error.h"

namespace meshnn {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp32:
      return "fp32";
    case Precision::bf16:
      return "bf16";
    case Precision::bf16x2:
      return "bf16x2";
    case Precision::bf16x3:
      return "bf16x3";
  }
  return "?";
}

Precision parse_precision(const std::string& s) {
  for (Precision p : {Precision::fp32, Precision::bf16, Precision::bf16x2, Precision::bf16x3})
    if (s == precision_name(p)) return p;
  throw InvalidArgument("unknown precision mode '" + s +
                        "' (expected fp32, bf16, bf16x2 or bf16x3)");
}

}  // namespace meshnn
