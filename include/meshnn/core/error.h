// Error hierarchy and the always-on check macro.
//
// Every failure at the library boundary is a meshnn::Error subclass; nothing calls abort() on bad
// input. Messages name the tensor / key / file and what was expected.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace meshnn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};
// A caller passed something that can never work (bad option, out-of-range index).
class InvalidArgument : public Error {
  using Error::Error;
};
// Tensor ranks or shapes do not agree with what an op or layer expects.
class ShapeError : public Error {
  using Error::Error;
};
// A checkpoint weight is missing or misshaped; the message names the key.
class WeightError : public Error {
  using Error::Error;
};
// A file is malformed; the message names the file and the byte offset.
class FormatError : public Error {
  using Error::Error;
};
// A valid request this build or CPU cannot serve (e.g. bf16 primitives without AVX512-BF16).
class Unsupported : public Error {
  using Error::Error;
};
// A oneDNN / MPI / OS call failed; wraps its status.
class BackendError : public Error {
  using Error::Error;
};
// A collective failed, a peer device died or timed out.
class CommError : public Error {
  using Error::Error;
};
// A second call on an object that takes one call at a time (a stream's push / flush / reset)
// while another thread's call on it runs; the object is left as it was (core/exclusive.h).
class InUseError : public Error {
  using Error::Error;
};

namespace detail {
template <class... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

}  // namespace meshnn

// MESHNN_CHECK(cond, parts...): always on; throws InvalidArgument with the concatenated parts.
#define MESHNN_CHECK(cond, ...)                                                          \
  do {                                                                                   \
    if (!(cond)) throw ::meshnn::InvalidArgument(::meshnn::detail::concat(__VA_ARGS__)); \
  } while (0)

// MESHNN_CHECK_AS(ErrorType, cond, parts...): same, with a chosen Error subclass.
#define MESHNN_CHECK_AS(type, cond, ...)                            \
  do {                                                              \
    if (!(cond)) throw type(::meshnn::detail::concat(__VA_ARGS__)); \
  } while (0)

// MESHNN_DCHECK: internal invariants, debug builds only.
#ifdef NDEBUG
#define MESHNN_DCHECK(cond, ...) \
  do {                           \
  } while (0)
#else
#define MESHNN_DCHECK(cond, ...) MESHNN_CHECK_AS(::meshnn::Error, cond, "internal: ", __VA_ARGS__)
#endif
