// meshnn, the command line: one file per subcommand under src/cli/ (cli/commands.h); the shared
// main with its exit codes is cli/program.h.
#include "cli/program.h"

int main(int argc, char** argv) {
  return meshnn::cli::run_program(
      {"meshnn", "meshnn — sharded inference runtime for audio decoders and robotics adapters"},
      argc, argv);
}
