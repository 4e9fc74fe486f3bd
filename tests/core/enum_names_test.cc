// Issue 33: one way to spell an enum (core/enum_names.h). The table's lookups and list text, and a
// scan of src/ for the two hand-written forms it replaced: a switch whose cases return string
// literals, and a chain of `if (s == "name") return E::value;`.
#include "core/enum_names.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/env.h"
#include "meshnn/core/precision.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;

enum class Fruit { apple, pear, plum, fig };
constexpr EnumNames<Fruit, 3> kFruit{
    "fruit", {{Fruit::apple, "apple"}, {Fruit::pear, "pear"}, {Fruit::plum, "plum"}}};

TEST(EnumNames, NamesParsesAndListsBothWays) {
  static_assert(kFruit.name(Fruit::pear)[0] == 'p');  // usable at compile time
  for (const Fruit f : kFruit.values()) EXPECT_EQ(kFruit.parse(kFruit.name(f)), f);
  EXPECT_STREQ(kFruit.name(Fruit::fig), "?");
  EXPECT_STREQ(kFruit.name(Fruit::fig, "other"), "other");
  EXPECT_EQ(kFruit.list_text(), "apple, pear or plum");
  EXPECT_FALSE(kFruit.find("Apple").has_value());
  EXPECT_FALSE(kFruit.find("").has_value());
  try {
    kFruit.parse("kiwi");
    FAIL() << "kiwi parsed";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "unknown fruit 'kiwi' (expected apple, pear or plum)");
  }
}

TEST(EnumNames, EnvChoiceNamesTheVariable) {
  constexpr EnumNames<Fruit, 2> two{"fruit", {{Fruit::apple, "apple"}, {Fruit::pear, "pear"}}};
  ::unsetenv("MESHNN_LINK");
  EXPECT_FALSE(env_choice(EnvSwitch::link, two).has_value());
  ::setenv("MESHNN_LINK", "pear", 1);
  EXPECT_EQ(env_choice(EnvSwitch::link, two), Fruit::pear);
  ::setenv("MESHNN_LINK", "plum", 1);
  try {
    env_choice(EnvSwitch::link, two);
    FAIL() << "plum accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "MESHNN_LINK=plum: expected apple or pear");
  }
  ::unsetenv("MESHNN_LINK");
}

// The product tables keep today's spellings and messages.
TEST(EnumNames, ProductTablesRoundTrip) {
  for (const Precision p : all_precisions()) EXPECT_EQ(parse_precision(precision_name(p)), p);
  EXPECT_EQ(precision_names_text(), "fp32, bf16, bf16x2 or bf16x3");
  EXPECT_THROW(parse_precision("fp16"), InvalidArgument);
  EXPECT_STREQ(dtype_name(DType::boolean), "bool");
  EXPECT_STREQ(dtype_name(DType::bf16), "bf16");
  EXPECT_STREQ(env_name(EnvSwitch::deconv_algo), "MESHNN_DECONV_ALGO");
  EXPECT_EQ(parse_backend("mpi"), Backend::mpi);
  EXPECT_EQ(parse_backend("local"), Backend::local);
  EXPECT_THROW(parse_backend("tcp"), InvalidArgument);
}

// ---- the source scan ----------------------------------------------------------------------------

std::vector<std::string> lines_of(const fs::path& f) {
  std::ifstream in(f);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b);
}

// `case X::y:` followed by `return "…"`: a switch table of names.
bool switch_name_case(const std::vector<std::string>& lines, size_t i) {
  const std::string t = trimmed(lines[i]);
  if (t.rfind("case ", 0) != 0 || t.back() != ':' || t.find("::") == std::string::npos)
    return false;
  return i + 1 < lines.size() && trimmed(lines[i + 1]).rfind("return \"", 0) == 0;
}

// `if (v == "name") return E::value;` (or `*v`): one link of a parse chain.
bool parse_chain_link(const std::string& line) {
  const std::string t = trimmed(line);
  if (t.rfind("if (", 0) != 0) return false;
  const size_t eq = t.find(" == \"");
  if (eq == std::string::npos) return false;
  const size_t close = t.find("\") return ", eq);
  return close != std::string::npos && t.find("::", close) != std::string::npos &&
         t.find("||") == std::string::npos;
}

// "src/x.cc:12" for every switch-table case and every parse chain of two or more links.
std::vector<std::string> scan(const fs::path& root) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".cc" || ext == ".h")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> found;
  for (const fs::path& f : files) {
    const std::vector<std::string> lines = lines_of(f);
    const std::string rel = fs::relative(f, root).string();
    for (size_t i = 0; i < lines.size(); ++i) {
      const bool chain =
          parse_chain_link(lines[i]) && ((i > 0 && parse_chain_link(lines[i - 1])) ||
                                         (i + 1 < lines.size() && parse_chain_link(lines[i + 1])));
      if (switch_name_case(lines, i) || chain) found.push_back(rel + ":" + std::to_string(i + 1));
    }
  }
  return found;
}

std::string joined(const std::vector<std::string>& v) {
  std::ostringstream s;
  for (const std::string& x : v) s << "\n  " << x;
  return s.str();
}

TEST(EnumNames, NoHandWrittenNameTablesInSrc) {
  const std::vector<std::string> found = scan(MESHNN_SOURCE_DIR);
  EXPECT_TRUE(found.empty()) << "name tables outside core/enum_names.h:" << joined(found);
}

// The scan finds both forms in a tree made here, and leaves one-off comparisons alone.
TEST(EnumNames, ScanFindsSwitchTablesAndParseChains) {
  const fs::path root = fs::temp_directory_path() / ("meshnn-enum-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "src/a");
  std::ofstream(root / "src/a/x.cc") << "const char* n(K k) {\n  switch (k) {\n"
                                        "    case K::a:\n      return \"a\";\n  }\n}\n"
                                        "K p(const std::string& s) {\n"
                                        "  if (s == \"a\") return K::a;\n"
                                        "  if (s == \"b\") return K::b;\n}\n"
                                        "void q() {\n  if (s == \"--help\") return K::a;\n"
                                        "  int z = 0;\n  switch (z) {\n    case 1:\n"
                                        "      return \"x\";\n  }\n}\n";
  const std::vector<std::string> found = scan(root);
  fs::remove_all(root);
  EXPECT_EQ(found, (std::vector<std::string>{"src/a/x.cc:3", "src/a/x.cc:8", "src/a/x.cc:9"}))
      << joined(found);
}

}  // namespace
}  // namespace meshnn
