// The guides name files that exist: every backticked repository path in docs/architecture.md and
// docs/adding_a_model.md is on disk, and architecture.md's folder table lists exactly the folders
// of src/. Each failure names doc:line. A placeholder such as `src/models/<family>/` is a pattern,
// not a path, and a `{a,b}` group names each of its members.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace meshnn {
namespace {

namespace fs = std::filesystem;

const char* const kTopFolders[] = {"src/",  "include/", "tests/", "tools/",    "bench/", "python/",
                                   "docs/", "web/",     "cmake/", "examples/", "fuzz/"};

bool is_repo_path(const std::string& s) {
  if (s.find_first_of(" <*") != std::string::npos) return false;
  for (const char* top : kTopFolders)
    if (s.rfind(top, 0) == 0) return true;
  return false;
}

// "a/b.{h,cc}" → {"a/b.h", "a/b.cc"}; a path without a group → itself.
std::vector<std::string> expand(const std::string& s) {
  const size_t open = s.find('{'), close = s.find('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {s};
  std::vector<std::string> out;
  const std::string group = s.substr(open + 1, close - open - 1);
  size_t from = 0;
  while (from <= group.size()) {
    const size_t comma = std::min(group.find(',', from), group.size());
    for (const std::string& rest : expand(s.substr(close + 1)))
      out.push_back(s.substr(0, open) + group.substr(from, comma - from) + rest);
    from = comma + 1;
  }
  return out;
}

struct Mention {
  int line;
  std::string path;
};

// The backticked spans of a markdown file that name repository paths, with their lines.
std::vector<Mention> path_mentions(const std::string& text) {
  std::vector<Mention> out;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ++line;
    if (text[i] != '`') continue;
    const size_t end = text.find('`', i + 1);
    if (end == std::string::npos) break;
    const std::string span = text.substr(i + 1, end - i - 1);
    if (span.find('\n') == std::string::npos && is_repo_path(span))
      for (const std::string& p : expand(span)) out.push_back({line, p});
    for (size_t j = i + 1; j < end; ++j) line += text[j] == '\n';
    i = end;
  }
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> missing_paths(const fs::path& root, const char* doc) {
  std::vector<std::string> bad;
  for (const Mention& m : path_mentions(read(root / doc)))
    if (!fs::exists(root / m.path))
      bad.push_back(std::string(doc) + ":" + std::to_string(m.line) + ": `" + m.path + "`");
  return bad;
}

TEST(DocsPaths, ScannerFindsPathsAndExpandsGroups) {
  const auto m = path_mentions("a `src/x.{h,cc}` b\n`meshnn serve` `src/<family>/` `tools/y.py`\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].path, "src/x.h");
  EXPECT_EQ(m[1].path, "src/x.cc");
  EXPECT_EQ(m[2].path, "tools/y.py");
  EXPECT_EQ(m[2].line, 2);
}

TEST(DocsPaths, EveryBacktickedPathInTheGuidesExists) {
  const fs::path root = MESHNN_SOURCE_DIR;
  for (const char* doc : {"docs/architecture.md", "docs/adding_a_model.md"}) {
    EXPECT_GT(path_mentions(read(root / doc)).size(), 10u) << doc;
    for (const std::string& bad : missing_paths(root, doc))
      ADD_FAILURE() << bad << " does not exist (renamed or deleted: say where it went)";
  }
}

TEST(DocsPaths, ArchitectureFolderTableMatchesSrc) {
  const fs::path root = MESHNN_SOURCE_DIR;
  std::set<std::string> listed, on_disk;
  std::ifstream in(root / "docs/architecture.md");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `src/", 0) != 0) continue;
    const size_t end = line.find('`', 3);
    const std::string path = line.substr(3, end - 3);  // "src/io/"
    if (path.size() > 5 && path.back() == '/' && path.find('/', 4) == path.size() - 1)
      listed.insert(path.substr(4, path.size() - 5));
  }
  for (const auto& e : fs::directory_iterator(root / "src"))
    if (e.is_directory()) on_disk.insert(e.path().filename().string());
  EXPECT_EQ(listed, on_disk) << "docs/architecture.md's folder table against `ls src`";
}

}  // namespace
}  // namespace meshnn
