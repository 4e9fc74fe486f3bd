// HTTP request semantics of an HTTP session (http_session.h): the transfer and content
// codings refused, and the request path's %XX escapes decoded. (Accept negotiation and the
// Content-Type of a body are body.h's; HEAD is answered in reply().)
#include <algorithm>
#include <string_view>

#include "meshnn/core/error.h"
#include "serve/http_session.h"

namespace meshnn::serve::internal {

// The request path with its %XX escapes decoded; false after answering 400 for a bad escape.
bool HttpSession::decoded_path(std::string& out) {
  const Request& req = parser_->get();
  const std::string_view target(req.target().data(), req.target().size());
  try {
    out = decode_path(target.substr(0, target.find('?')));
    return true;
  } catch (const meshnn::Error& e) {
    error(400, "bad_request", e.what(), true);
    return false;
  }
}

// RFC 9112 6.1 / RFC 9110 8.4: a transfer coding other than chunked, or any content coding,
// is refused (the body would be parsed as something it is not). false after answering.
bool HttpSession::codings_supported() {
  const Request& req = parser_->get();
  const std::string_view te = sv(req[http::field::transfer_encoding]);
  for (size_t pos = 0; !te.empty() && pos <= te.size();) {
    const size_t comma = std::min(te.find(',', pos), te.size());
    std::string_view t = te.substr(pos, comma - pos);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    if (!beast::iequals(beast::string_view(t.data(), t.size()), "chunked")) {
      error(501, "not_implemented",
            "Transfer-Encoding: " + std::string(te) + ": only chunked is supported", true);
      return false;
    }
    pos = comma + 1;
  }
  const std::string_view ce = sv(req[http::field::content_encoding]);
  if (!ce.empty() && !beast::iequals(beast::string_view(ce.data(), ce.size()), "identity")) {
    error(415, "unsupported_media_type",
          "Content-Encoding: " + std::string(ce) + ": send the body uncompressed", true);
    return false;
  }
  return true;
}

}  // namespace meshnn::serve::internal
