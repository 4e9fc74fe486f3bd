// The one error → status table: for each typed error of the library (include/meshnn/core/error.h,
// NumericalError in input_checks.h) its HTTP status and stable code string (serve's JSON answers
// and WebSocket error frames), its CLI exit code and the Python exception it becomes.
// serve/errors.cc, the CLI's exit (cli/failure.cc) and the Python module's exception translator
// read it; tests/core/error_codes_test.cc walks every row through all four.
#pragma once

#include <exception>
#include <span>
#include <string>

namespace meshnn {

struct ErrorCode {
  const char* type;              // the C++ class, "InvalidArgument"
  int http_status;               // 400 … 599
  const char* code;              // the stable code of serve's error body, "bad_request"
  int exit_code;                 // the CLI's exit status
  const char* python_exception;  // a Python builtin exception, "ValueError"
  // Throws this row's type with `message` (tests and the Python module's self-check use it).
  void (*raise)(const std::string& message);  // never returns
  bool (*matches)(const std::exception& e);   // e is of this row's type (or derived from it)
};

// Every row, most derived types first; the last row is meshnn::Error itself, the fallback.
std::span<const ErrorCode> error_codes();

// The row of e's type: a meshnn::Error subclass without a row of its own, meshnn::Error itself and
// any other exception (std::bad_alloc, …) get the last row (500 "internal", exit 1,
// RuntimeError).
const ErrorCode& error_code_of(const std::exception& e);

}  // namespace meshnn
