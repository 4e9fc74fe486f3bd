// The server's error → status table (errors.h).
#include "serve/errors.h"

#include <nlohmann/json.hpp>

#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"

namespace meshnn::serve::internal {

std::string error_json(const std::string& code, const std::string& message) {
  return nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

ErrorStatus classify(const std::exception& e) {
  if (dynamic_cast<const InvalidArgument*>(&e) || dynamic_cast<const ShapeError*>(&e) ||
      dynamic_cast<const FormatError*>(&e))
    return {400, "bad_request"};
  // Finite inputs so large that float32 overflows inside the model (a 3e38 mel): the input's
  // fault, and the message says where.
  if (dynamic_cast<const NumericalError*>(&e)) return {422, "unprocessable"};
  if (dynamic_cast<const CommError*>(&e)) return {503, "mesh_failed"};
  return {500, "internal"};
}

}  // namespace meshnn::serve::internal
