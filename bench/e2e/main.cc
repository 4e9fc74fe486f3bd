// meshnn-bench: the end-to-end benchmarks (median timings, ratios against PyTorch and other
// baselines), one subcommand per file of bench/e2e registered through cli::Registrar. `meshnn
// bench SUB ...` executes this binary with the same arguments. The main, its output check and
// exit codes are meshnn's own (cli/program.h).
#include "cli/program.h"

int main(int argc, char** argv) {
  return meshnn::cli::run_program(
      {"meshnn-bench",
       "meshnn-bench — meshnn's end-to-end benchmarks (median timings, ratios against baselines)"},
      argc, argv);
}
