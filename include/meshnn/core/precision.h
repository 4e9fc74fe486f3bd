// Precision modes of every conv / matmul layer (operand splitting over a bf16 datapath).
#pragma once

#include <string>

namespace meshnn {

enum class Precision {
  fp32,    // f32 operands, f32 accumulation (default)
  bf16,    // bf16(src) · bf16(w), f32 accumulation
  bf16x2,  // weight split hi = bf16(w), lo = w − hi: bf16(src)·hi + bf16(src)·lo
  bf16x3,  // both split: hi·hi + hi·lo + lo·hi (lo·lo dropped)
};

const char* precision_name(Precision p);
// Parses "fp32" | "bf16" | "bf16x2" | "bf16x3"; InvalidArgument naming the accepted values.
Precision parse_precision(const std::string& s);

}  // namespace meshnn
