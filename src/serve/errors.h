// serve's side of the one error → status table (core/error_codes.h): the status and code of an
// exception, the message a client is shown, and the JSON error body of an HTTP answer and of a
// WebSocket error frame. Internal to the serve_* files.
#pragma once

#include <exception>
#include <string>

namespace meshnn::serve::internal {

// {"error": {"code", "message"}}: the body of every HTTP error answer.
std::string error_json(const std::string& code, const std::string& message);

// {"type": "error", "code", "message", "request_id"}: a WebSocket error frame.
std::string ws_error_frame(const std::string& code, const std::string& message,
                           const std::string& request_id);

// A client's input the model or its checks refuse is 4xx with the cause in the body; 503 says the
// server cannot answer now (queue full, draining, a failed mesh); any other 5xx is a fault of
// ours: the body names only the request id and the log has the cause.
struct ErrorStatus {
  int status;
  const char* code;
  bool ours() const { return status >= 500 && status != 503; }
};
// The row of e's type in core's table.
ErrorStatus classify(const std::exception& e);

// What the client is shown: the message, or for a fault of ours "internal error (request id …)".
std::string shown_message(const ErrorStatus& st, const std::string& message,
                          const std::string& request_id);

}  // namespace meshnn::serve::internal
