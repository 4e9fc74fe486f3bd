// How the command-line programs (meshnn, meshnn-bench, meshnn-serve) end on an exception that
// escapes a command: its message and exit code, the code from core's one error → status table
// (core/error_codes.h).
#pragma once

#include <exception>
#include <string>

namespace meshnn::cli {

struct Failure {
  int exit_code;
  std::string message;  // "<program>: error: <what>" (stderr)
};
Failure failure_of(const std::string& program, const std::exception& e);

// Prints failure_of(program, e) and returns its exit code. Under a multi-process MPI launch an
// error may escape on one rank only while the others wait in a collective: the message carries
// the rank and the whole job is aborted (does not return).
int report_failure(const std::string& program, const std::exception& e);

}  // namespace meshnn::cli
