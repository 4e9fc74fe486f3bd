// The one error → status table of `meshnn serve` (classify) and the JSON error body, for HTTP
// answers and WebSocket error frames alike. Internal to the serve_* files.
#pragma once

#include <exception>
#include <string>

namespace meshnn::serve::internal {

std::string error_json(const std::string& code, const std::string& message);

// A client's input the model or its checks refuse is 4xx with the cause in the body; anything
// else is a fault of ours (500: the body names the request id, the log has the cause).
struct ErrorStatus {
  int status;
  const char* code;
  bool ours() const { return status == 500; }
};
ErrorStatus classify(const std::exception& e);

}  // namespace meshnn::serve::internal
