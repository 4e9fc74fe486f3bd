#include "support/source_scan.h"

#include <algorithm>
#include <fstream>

namespace meshnn::test {

namespace fs = std::filesystem;

std::vector<fs::path> source_files(const fs::path& root, std::initializer_list<const char*> dirs) {
  std::vector<fs::path> files;
  for (const char* dir : dirs) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cc" || ext == ".h" || ext == ".cpp"))
        files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string code_without_comments(const fs::path& file) {
  std::ifstream in(file);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const size_t c = line.find("//");
    out += (c == std::string::npos ? line : line.substr(0, c)) + "\n";
  }
  return out;
}

int line_at(const std::string& text, size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

}  // namespace meshnn::test
