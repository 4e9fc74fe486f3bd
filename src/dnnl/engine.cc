#include "dnnl/engine.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <sstream>

#include "meshnn/core/cpu.h"

namespace meshnn::dnnl_glue {

std::string effective_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

}  // namespace meshnn::dnnl_glue

namespace meshnn {

std::string onednn_version() {
  using dnnl_glue::effective_isa;
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream os;
  os << v->major << '.' << v->minor << '.' << v->patch << " (cpu runtime "
     << (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OMP" : "other") << ", isa " << effective_isa()
     << ")";
  return os.str();
}

}  // namespace meshnn
