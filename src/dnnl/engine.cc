#include "dnnl/engine.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <sstream>

#include "core/enum_names.h"
#include "meshnn/core/cpu.h"

namespace meshnn::dnnl_glue {

namespace {
using Isa = dnnl::cpu_isa;
constexpr EnumNames<Isa, 8> kIsaNames{"oneDNN ISA",
                                      {{Isa::sse41, "sse41"},
                                       {Isa::avx, "avx"},
                                       {Isa::avx2, "avx2"},
                                       {Isa::avx2_vnni, "avx2_vnni"},
                                       {Isa::avx512_core, "avx512_core"},
                                       {Isa::avx512_core_vnni, "avx512_core_vnni"},
                                       {Isa::avx512_core_bf16, "avx512_core_bf16"},
                                       {Isa::avx512_core_amx, "avx512_core_amx"}}};
}  // namespace

std::string effective_isa() { return kIsaNames.name(dnnl::get_effective_cpu_isa(), "other"); }

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
