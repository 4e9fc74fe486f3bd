// serve's side of the one error → status table (errors.h, core/error_codes.h).
#include "serve/errors.h"

#include <nlohmann/json.hpp>

#include "meshnn/core/error_codes.h"

namespace meshnn::serve::internal {

std::string error_json(const std::string& code, const std::string& message) {
  return nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

std::string ws_error_frame(const std::string& code, const std::string& message,
                           const std::string& request_id) {
  return nlohmann::json{
      {"type", "error"}, {"code", code}, {"message", message}, {"request_id", request_id}}
      .dump();
}

ErrorStatus classify(const std::exception& e) {
  const ErrorCode& row = error_code_of(e);
  return {row.http_status, row.code};
}

std::string shown_message(const ErrorStatus& st, const std::string& message,
                          const std::string& request_id) {
  return st.ours() ? "internal error (request id " + request_id + ")" : message;
}

}  // namespace meshnn::serve::internal
