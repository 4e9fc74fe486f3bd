// meshnn command line. Exit codes: 0 ok, 1 runtime error (meshnn::Error), 2 usage error.
#include <cstdio>

#include "cli/commands.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"

namespace meshnn::cli {
std::map<std::string, RegisterFn>& command_registry() {
  static std::map<std::string, RegisterFn> r;
  return r;
}
}  // namespace meshnn::cli

int main(int argc, char** argv) {
  meshnn::init_logging_from_env();
  CLI::App app{"meshnn — sharded inference runtime for audio decoders and robotics adapters"};
  app.require_subcommand(1);
  for (auto& [name, fn] : meshnn::cli::command_registry()) fn(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const meshnn::Error& e) {
    std::fprintf(stderr, "meshnn: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meshnn: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
