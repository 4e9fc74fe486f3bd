// meshnn info: CPU features, oneDNN version and ISA, thread settings.
#include <omp.h>

#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/filter_cache.h"
#include "meshnn/core/precision.h"

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
    // The bf16 modes run everywhere; only a native datapath makes them faster than fp32, so
    // --precision auto picks bf16 only there (docs/precision.md).
    std::printf("bf16 compute: %s\n",
                bf16_datapath_native()
                    ? "native (avx512_bf16): --precision auto runs bf16 where measured >= 50 dB"
                    : "emulated in f32 (exact, slower than fp32): --precision auto runs fp32");
    std::printf("oneDNN:       %s\n", onednn_version().c_str());
    std::printf("cores:        %d available\n", available_cores());
    std::printf("omp threads:  %d (OMP_NUM_THREADS=%s)\n", omp_get_max_threads(),
                omp_env ? omp_env : "unset");
    const std::string cache = filter_cache_dir();
    std::printf("filter cache: %s\n", cache.empty() ? "off" : cache.c_str());
    if (!cache.empty())
      std::printf("  memory:     %s (MESHNN_FILTER_MEMORY)\n", filter_cache_memory());
  });
});
}  // namespace

}  // namespace meshnn::cli
