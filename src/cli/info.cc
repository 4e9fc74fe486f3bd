// meshnn info: CPU features, oneDNN version and ISA, thread settings.
#include <omp.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "meshnn/core/cpu.h"

namespace meshnn::cli {

namespace {
const Registrar reg("info", [](CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Print CPU features, oneDNN version and thread settings");
  cmd->callback([] {
    const CpuFeatures& f = cpu_features();
    const char* omp_env = std::getenv("OMP_NUM_THREADS");
    std::printf("meshnn %s\n", MESHNN_VERSION);
    std::printf("cpu:          %s\n", f.brand.empty() ? "unknown" : f.brand.c_str());
    std::printf("cpu features: %s\n", cpu_features_str().c_str());
    std::printf("bf16 compute: %s\n", f.avx512_bf16 ? "native (avx512_bf16)"
                                      : f.avx512bw  ? "emulated by oneDNN (slow)"
                                                    : "unavailable (fp32 only)");
    std::printf("oneDNN:       %s\n", onednn_version().c_str());
    std::printf("cores:        %d available\n", available_cores());
    std::printf("omp threads:  %d (OMP_NUM_THREADS=%s)\n", omp_get_max_threads(),
                omp_env ? omp_env : "unset");
  });
});
}  // namespace

}  // namespace meshnn::cli
