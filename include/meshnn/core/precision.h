// Precision modes of every conv / matmul layer (operand splitting over a bf16 datapath).
#pragma once

#include <string>
#include <vector>

namespace meshnn {

enum class Precision {
  fp32,    // f32 operands, f32 accumulation (default)
  bf16,    // bf16(src) · bf16(w), f32 accumulation
  bf16x2,  // weight split hi = bf16(w), lo = w − hi: bf16(src)·hi + bf16(src)·lo
  bf16x3,  // both split: hi·hi + hi·lo + lo·hi (lo·lo dropped)
};

// Every mode in the order above: the one name table that parse_precision, StagePrecision and the
// CLI help read.
const std::vector<Precision>& all_precisions();
const char* precision_name(Precision p);
// "fp32, bf16, bf16x2 or bf16x3" (for error messages and help texts).
std::string precision_names_text();
// Parses "fp32" | "bf16" | "bf16x2" | "bf16x3"; InvalidArgument naming the accepted values.
Precision parse_precision(const std::string& s);

// True when this CPU multiplies bf16 operands natively (AVX512-BF16 `vdpbf16ps`, which every CPU
// with AMX-BF16 also has). Elsewhere the bf16 modes are emulated in f32 (exact, but slower than
// fp32), and `--precision auto` runs fp32.
bool bf16_datapath_native();

}  // namespace meshnn
