// The process-wide oneDNN CPU engine and library facts (the version string is public:
// meshnn::onednn_version in meshnn/core/cpu.h). Only src/dnnl/ includes dnnl.hpp.
#pragma once

#include <string>

namespace meshnn::dnnl_glue {

// oneDNN's effective ISA name, e.g. "avx512_core_bf16".
std::string effective_isa();

}  // namespace meshnn::dnnl_glue
