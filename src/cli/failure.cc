// The exit of the command-line programs on an escaped exception (failure.h).
#include "cli/failure.h"

#include <cstdio>
#include <new>

#include "meshnn/core/error.h"
#include "meshnn/core/error_codes.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {

Failure failure_of(const std::string& program, const std::exception& e) {
  const int code = error_code_of(e).exit_code;
  if (dynamic_cast<const Error*>(&e)) return {code, program + ": error: " + e.what()};
  if (dynamic_cast<const std::bad_alloc*>(&e))
    return {code, program +
                      ": error: out of memory (an input or option asks for more memory than the "
                      "machine has; see docs/reliability.md for the memory of long inputs)"};
  return {code, program + ": internal error: " + e.what()};
}

int report_failure(const std::string& program, const std::exception& e) {
  const Failure f = failure_of(program, e);
  abort_job_if_distributed(f.exit_code, f.message);
  std::fprintf(stderr, "%s\n", f.message.c_str());
  return f.exit_code;
}

}  // namespace meshnn::cli
