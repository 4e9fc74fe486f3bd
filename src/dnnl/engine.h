// The process-wide oneDNN CPU engine and library facts. Only src/dnnl/ includes dnnl.hpp.
#pragma once

#include <string>

namespace meshnn::dnnl_glue {

// "2.6.3 (cpu runtime OMP, isa: avx512_core_bf16)".
std::string version_str();
// oneDNN's effective ISA name, e.g. "avx512_core_bf16".
std::string effective_isa();

}  // namespace meshnn::dnnl_glue
