// Issue 33: one layout op (ops::permute, src/ops/permute.cc, with ops::interleave / deinterleave
// for the wave layouts) instead of hand-written transposes. A source scan of src/, python/src/ and
// examples/ finds loops that only reorder axes by their index pattern: a copy `d[i] = s[j];` or
// `memcpy(d + i, s + j, …)` whose two index expressions both multiply and name the same loop
// variables in a different order (`d[t * C + c] = s[c * S + t]`, the 12 transposes this op
// replaced). Kernel weight packing (into padded or tiled layouts the kernels own) is allowed by
// name below, each with its reason; an entry that no longer matches anything fails too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/source_scan.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

using test::code_without_comments;
using test::line_at;

// The identifiers of `e` that are also in `common`, in order of first appearance.
std::vector<std::string> order_in(const std::string& e, const std::set<std::string>& common) {
  static const std::regex ident(R"([A-Za-z_]\w*)");
  std::vector<std::string> seen;
  for (auto it = std::sregex_iterator(e.begin(), e.end(), ident); it != std::sregex_iterator();
       ++it)
    if (common.count(it->str()) && std::find(seen.begin(), seen.end(), it->str()) == seen.end())
      seen.push_back(it->str());
  return seen;
}

// Two flat indices over the same variables in a different order: a reordering of axes.
bool reorders(const std::string& a, const std::string& b) {
  if (a.find('*') == std::string::npos || b.find('*') == std::string::npos) return false;
  static const std::regex ident(R"([A-Za-z_]\w*)");
  std::set<std::string> in_a, common;
  for (auto it = std::sregex_iterator(a.begin(), a.end(), ident); it != std::sregex_iterator();
       ++it)
    in_a.insert(it->str());
  for (auto it = std::sregex_iterator(b.begin(), b.end(), ident); it != std::sregex_iterator();
       ++it)
    if (in_a.count(it->str())) common.insert(it->str());
  return common.size() >= 2 && order_in(a, common) != order_in(b, common);
}

// "path:line" of every hand transpose under root (paths relative to root).
std::vector<std::string> hand_transposes(const fs::path& root) {
  // d[i] = s[j]; (s may be a call such as x.data<float>()), d[i] alike.
  static const std::regex copy(R"(\[([^\[\];]+)\]\s*=\s*[\w.<>()]+\[([^\[\];]+)\]\s*;)");
  static const std::regex block(
      R"(memcpy\(\s*\w+(?:\.\w+<\w+>\(\))?\s*\+\s*([^,;]+),\s*\w+(?:\.\w+<\w+>\(\))?\s*\+\s*([^,;]+),)");
  std::vector<std::string> found;
  for (const fs::path& file : test::source_files(root, {"src", "python/src", "examples"})) {
    const std::string code = code_without_comments(file);
    const std::string rel = fs::relative(file, root).string();
    for (auto it = std::sregex_iterator(code.begin(), code.end(), copy);
         it != std::sregex_iterator(); ++it)
      if (reorders((*it)[1].str(), (*it)[2].str()))
        found.push_back(rel + ":" + std::to_string(line_at(code, it->position(0))));
    for (auto it = std::sregex_iterator(code.begin(), code.end(), block);
         it != std::sregex_iterator(); ++it)
      if (reorders((*it)[1].str(), (*it)[2].str()))
        found.push_back(rel + ":" + std::to_string(line_at(code, it->position(0))));
  }
  return found;
}

// Reorderings that are not layout conversions, matched by all of their path parts (so a file
// moving between folders keeps its entry) — at most a handful, each with its reason.
struct Allowed {
  std::vector<std::string> parts;
  const char* why;
};
const std::vector<Allowed>& allowed() {
  static const std::vector<Allowed> a = {
      {{"src/kernels/"},
       "the kernels pack weights into their own padded / tiled layouts once at load (conv1d "
       "direct, strided GEMM, the Winograd transforms)"},
      {{"gr00t", "adapter"},
       "the hoisted K/V head split writes into the runner's persistent K/V buffers in parallel "
       "(a permute into a caller's buffer would carry it; the op returns a new tensor)"},
  };
  return a;
}

bool matches(const std::string& where, const Allowed& a) {
  return std::all_of(a.parts.begin(), a.parts.end(),
                     [&](const std::string& p) { return where.find(p) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& v) {
  std::ostringstream s;
  for (const std::string& x : v) s << "\n  " << x;
  return s.str();
}

TEST(OnePermute, NoHandWrittenTransposeInTheProduct) {
  const std::vector<std::string> found = hand_transposes(MESHNN_SOURCE_DIR);
  std::vector<std::string> bad;
  std::vector<int> used(allowed().size(), 0);
  for (const std::string& f : found) {
    bool ok = false;
    for (size_t i = 0; i < allowed().size(); ++i)
      if (matches(f, allowed()[i])) ok = true, ++used[i];
    if (!ok) bad.push_back(f);
  }
  EXPECT_TRUE(bad.empty()) << "loops that only reorder axes; use ops::permute / ops::interleave / "
                              "ops::deinterleave (src/ops/permute.h):"
                           << joined(bad);
  for (size_t i = 0; i < allowed().size(); ++i)
    EXPECT_GT(used[i], 0) << "allow-list entry '" << allowed()[i].parts[0]
                          << "' matches nothing any more: remove it";
}

// The scan finds what it is for (a tree made here): the 2-D, 4-D and row-block transposes it
// replaced, on one line or wrapped, while copies in the same order, offsets, gathers and comments
// are not counted.
TEST(OnePermute, ScanFindsHandTransposes) {
  const fs::path root = fs::temp_directory_path() / ("meshnn-permute-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "src/io");
  fs::create_directories(root / "examples/x");
  auto write = [&](const char* file, const char* text) { std::ofstream(root / file) << text; };
  write("src/io/a.cc",
        "// d[t * C + c] = s[c * S + t]; in a comment\n"                          // 1
        "void f() {\n"                                                            // 2
        "  for (t = 0; t < S; ++t) d[t * C + c] = s[c * S + t];\n"                // 3
        "  d[((b * T + t) * F + f) * C + c] =\n"                                  // 4
        "      s[((b * C + c) * T + t) * F + f];\n"                               // 5
        "  std::memcpy(d + (c * n + t) * freq, x + (t * channels + c) * freq,\n"  // 6
        "              freq * 4);\n"                                              // 7
        "  d[r * bins + k] = s[r * 2 * bins + bins + k];\n"                       // 8: a gather
        "  d[i] = s[i + off];\n"                                                  // 9: a shift
        "  d[(b * L + row) * C] = s[(b * n) * C];\n"                              // 10: same order
        "}\n");
  write("examples/x/main.cc",
        "int main() {\n  for (;;) rows.data<float>()[t * 2 + c] = w[c * n + t];\n}\n");
  const std::vector<std::string> found = hand_transposes(root);
  fs::remove_all(root);
  EXPECT_EQ(found, (std::vector<std::string>{"examples/x/main.cc:2", "src/io/a.cc:3",
                                             "src/io/a.cc:4", "src/io/a.cc:6"}))
      << joined(found);
}

}  // namespace
}  // namespace meshnn
