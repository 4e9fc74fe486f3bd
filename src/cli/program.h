// The one main of the command-line programs (meshnn, meshnn-bench): every subcommand registered
// through cli::Registrar in the program's own files, `--comm-timeout`, the output-path check run
// after parsing and before any command's work, unknown options refused before CLI11's "required"
// errors, and the exit codes: 0 ok, 1 runtime error (meshnn::Error), 2 usage error. Under a
// multi-process MPI launch a runtime error on any rank aborts the whole job (MPI_Abort, code 1).
#pragma once

namespace meshnn::cli {

struct Program {
  const char* name;         // "meshnn": the prefix of every error line
  const char* description;  // the first line of --help
};

// Parses argv against the registered subcommands and runs the chosen one; returns the exit code.
int run_program(const Program& program, int argc, char** argv);

}  // namespace meshnn::cli
