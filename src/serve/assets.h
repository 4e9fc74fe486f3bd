// The files of the page `meshnn serve` answers at / (web/ in the source tree), built into the
// binary: cmake/embed_web.cmake writes them into a generated source at build time, so the binary
// needs nothing installed beside it.
#pragma once

#include <string_view>
#include <vector>

namespace meshnn::serve {

struct WebAsset {
  std::string_view path;          // the URL path: "/" for web/index.html, else "/" + file name
  std::string_view file;          // the file under web/
  std::string_view content_type;  // from the extension
  std::string_view body;
};

// Every file of web/, index.html first.
const std::vector<WebAsset>& web_assets();

}  // namespace meshnn::serve
