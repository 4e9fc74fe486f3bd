// The one error → status table (error_codes.h).
#include "meshnn/core/error_codes.h"

#include <iterator>

#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"

namespace meshnn {
namespace {

template <class E>
[[noreturn]] void raise_as(const std::string& message) {
  throw E(message);
}
template <class E>
bool is_a(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}
template <class E>
constexpr ErrorCode row(const char* type, int http, const char* code, int exit_code,
                        const char* python) {
  return {type, http, code, exit_code, python, &raise_as<E>, &is_a<E>};
}

// Why these statuses: a client's input that the checks or the model refuse is 4xx with the cause
// in the body (malformed, wrong shape or value: 400; finite values so large that float32
// overflows inside the model: 422, the input's fault); a rank of an MPI mesh that failed is 503
// (the server stops); anything else — weights, backend, a build that lacks a feature, a stream
// used from two threads — is a fault of the server (500, the log has the cause). The CLI exits 1
// on every library error (docs/reliability.md: 2 is a usage error, 3 a failed MPI mesh of serve).
// Python: bad input → ValueError, a checkpoint key → KeyError, the rest → RuntimeError.
constexpr ErrorCode kRows[] = {
    row<InvalidArgument>("InvalidArgument", 400, "bad_request", 1, "ValueError"),
    row<ShapeError>("ShapeError", 400, "bad_request", 1, "ValueError"),
    row<FormatError>("FormatError", 400, "bad_request", 1, "RuntimeError"),
    row<NumericalError>("NumericalError", 422, "unprocessable", 1, "RuntimeError"),
    row<WeightError>("WeightError", 500, "internal", 1, "KeyError"),
    row<Unsupported>("Unsupported", 500, "internal", 1, "RuntimeError"),
    row<BackendError>("BackendError", 500, "internal", 1, "RuntimeError"),
    row<CommError>("CommError", 503, "mesh_failed", 1, "RuntimeError"),
    row<InUseError>("InUseError", 500, "internal", 1, "RuntimeError"),
    row<Error>("Error", 500, "internal", 1, "RuntimeError"),
};

}  // namespace

std::span<const ErrorCode> error_codes() { return kRows; }

const ErrorCode& error_code_of(const std::exception& e) {
  for (const ErrorCode& r : kRows)
    if (r.matches(e)) return r;
  return kRows[std::size(kRows) - 1];
}

}  // namespace meshnn
