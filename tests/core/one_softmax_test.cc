// Issue 33: exactly one softmax in the project (ops::softmax_row, src/ops/softmax.cc), so every
// attention shares one rule for NaN, masked keys and summation. Checked on the source tree: one
// function definition whose name holds "softmax", and no other file computing a max-subtracted
// exponent (the inline softmax loops this replaced). Each finding names file:line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/source_scan.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

using test::code_without_comments;
using test::line_at;

struct Findings {
  std::vector<std::string> definitions;  // "src/ops/softmax.cc:8 softmax_row"
  std::vector<std::string> exp_max;      // "src/x.cc:12" max-subtracted exponents
};

Findings scan(const fs::path& root) {
  Findings f;
  // name( … ) followed by `{` (after an optional const/noexcept): a definition, not a call.
  const std::regex name(R"(\b(\w*[Ss]oft_?[Mm]ax\w*)\s*\()");
  const std::regex def_tail(R"(^\s*((const|noexcept|override)\s*)*\{)");
  const std::regex exp_minus_max(R"(\bexpf?\s*\([^;]*-\s*\w*(mx|max|Max)\w*)");
  for (const fs::path& file : test::source_files(root, {"src"})) {
    const std::string code = code_without_comments(file);
    const std::string rel = fs::relative(file, root).string();
    for (auto it = std::sregex_iterator(code.begin(), code.end(), name);
         it != std::sregex_iterator(); ++it) {
      size_t i = static_cast<size_t>(it->position(0) + it->length(0));
      for (int depth = 1; i < code.size() && depth > 0; ++i)
        depth += code[i] == '(' ? 1 : code[i] == ')' ? -1 : 0;
      if (std::regex_search(code.substr(i, 200), def_tail))
        f.definitions.push_back(rel + ":" + std::to_string(line_at(code, it->position(0))) + " " +
                                (*it)[1].str());
    }
    for (auto it = std::sregex_iterator(code.begin(), code.end(), exp_minus_max);
         it != std::sregex_iterator(); ++it)
      f.exp_max.push_back(rel + ":" + std::to_string(line_at(code, it->position(0))));
  }
  return f;
}

std::string joined(const std::vector<std::string>& v) {
  std::ostringstream s;
  for (const std::string& x : v) s << "\n  " << x;
  return s.str();
}

TEST(OneSoftmax, ExactlyOneSoftmaxInSrc) {
  const Findings f = scan(MESHNN_SOURCE_DIR);
  ASSERT_EQ(f.definitions.size(), 1u) << joined(f.definitions);
  EXPECT_EQ(f.definitions[0].rfind("src/ops/softmax.cc:", 0), 0u) << f.definitions[0];
  EXPECT_NE(f.definitions[0].find("softmax_row"), std::string::npos) << f.definitions[0];
  // The max-subtracted exponent lives in that function only.
  ASSERT_EQ(f.exp_max.size(), 1u) << joined(f.exp_max);
  EXPECT_EQ(f.exp_max[0].rfind("src/ops/softmax.cc:", 0), 0u) << f.exp_max[0];
}

// The scan finds what it is for (a tree made here): a second softmax function and an inline
// max-subtracted softmax loop, while calls, declarations and comments are not counted.
TEST(OneSoftmax, ScanFindsASecondSoftmax) {
  const fs::path root = fs::temp_directory_path() / ("meshnn-softmax-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "src/ops");
  fs::create_directories(root / "src/models");
  auto write = [&](const char* file, const char* text) { std::ofstream(root / file) << text; };
  write("src/ops/softmax.h", "void softmax_row(float* x, long n);\n");
  write("src/ops/softmax.cc",
        "void softmax_row(float* x, long n) {\n  x[0] = std::exp(x[0] - mx);\n}\n");
  write("src/models/a.cc",
        "// softmax_row(x) { in a comment\nvoid f() { ops::softmax_row(s, n); }\n"
        "static void masked_softmax(float* x)\n    const {\n}\n"
        "void g() {\n  for (;;) s[j] = std::exp(s[j] - row_max);\n}\n");
  const Findings f = scan(root);
  fs::remove_all(root);
  ASSERT_EQ(f.definitions.size(), 2u) << joined(f.definitions);
  EXPECT_EQ(f.definitions[0], "src/models/a.cc:3 masked_softmax");
  EXPECT_EQ(f.definitions[1], "src/ops/softmax.cc:1 softmax_row");
  ASSERT_EQ(f.exp_max.size(), 2u) << joined(f.exp_max);
  EXPECT_EQ(f.exp_max[0], "src/models/a.cc:7");
  EXPECT_EQ(f.exp_max[1], "src/ops/softmax.cc:2");
}

}  // namespace
}  // namespace meshnn
