// meshnn demo: placeholder-free interim demo until the audio pipeline lands: prints `info`.
#include <cstdio>

#include "cli/commands.h"
#include "meshnn/core/cpu.h"

namespace meshnn::cli {

namespace {
const Registrar reg("demo", [](CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "Run the main job on a local mesh");
  cmd->callback([] { std::printf("meshnn demo: cpu features %s\n", cpu_features_str().c_str()); });
});
}  // namespace

}  // namespace meshnn::cli
