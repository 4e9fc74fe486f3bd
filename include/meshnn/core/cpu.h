// Run-time CPU feature detection (cpuid + the OS's XSAVE state); never assume an ISA.
#pragma once

#include <string>

namespace meshnn {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512_bf16 = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  std::string brand;
};

// Detected once, cached.
const CpuFeatures& cpu_features();
// One-line summary, e.g. "avx2 fma avx512f avx512bw avx512_bf16".
std::string cpu_features_str();
// Cores the process may run on (sched affinity), at least 1.
int available_cores();
// The oneDNN library in use: version and the CPU ISA its kernels dispatch to.
std::string onednn_version();

}  // namespace meshnn
