// The model registry is an explicit list (models/registry.cc): every family folder of src/models
// that is an audio model has an entry.cc, every entry it defines is in the list (so no static link
// drops one), and the generic code over the registry names no model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace meshnn {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The functions `ModelSpec name()` a file defines (entry.cc: one per family).
std::vector<std::string> spec_functions(const std::string& text) {
  std::vector<std::string> out;
  const std::string marker = "\nModelSpec ";
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
    const size_t b = at + marker.size(), e = text.find('(', b);
    if (e != std::string::npos && text.compare(e, 3, "() ") == 0 &&
        text.find(';', e) > text.find('{', e))
      out.push_back(text.substr(b, e - b));
  }
  return out;
}

// Folders of src/models that are no AudioModel family: the parts families share, and GR00T (a
// policy, whose API is meshnn/gr00t.h).
const std::set<std::string> kNotAudioFamilies = {"common", "gr00t"};

TEST(AudioModelRegistry, EveryFamilyFolderHasAnEntryTheRegistryLists) {
  const fs::path models = fs::path(MESHNN_SOURCE_DIR) / "src/models";
  const std::string registry = read(models / "registry.cc");
  const size_t list = registry.find("builtin_specs() {");
  ASSERT_NE(list, std::string::npos) << "registry.cc: no builtin_specs()";
  const std::string listed = registry.substr(list, registry.find('}', list) - list);
  int families = 0;
  for (const auto& e : fs::directory_iterator(models)) {
    const std::string family = e.path().filename().string();
    if (!e.is_directory() || kNotAudioFamilies.count(family)) continue;
    ++families;
    const fs::path entry = e.path() / "entry.cc";
    ASSERT_TRUE(fs::exists(entry)) << "src/models/" << family << " has no entry.cc";
    const std::vector<std::string> specs = spec_functions(read(entry));
    EXPECT_EQ(specs.size(), 1u) << "src/models/" << family << "/entry.cc defines one ModelSpec";
    for (const std::string& f : specs)
      EXPECT_NE(listed.find(f + "()"), std::string::npos)
          << f << " (src/models/" << family << "/entry.cc) is not in registry.cc's list";
  }
  EXPECT_GE(families, 3);
}

TEST(AudioModelRegistry, SpecFunctionsAreFoundInText) {
  EXPECT_EQ(spec_functions("x\nModelSpec a_spec() {\n}\nModelSpec b_spec();\n"),
            std::vector<std::string>{"a_spec"});
}

// Code lines (comments dropped) of the generic files over the registry name no model family.
TEST(AudioModelRegistry, GenericCodeNamesNoModel) {
  for (const char* f : {"src/api/audio_model.cc", "src/models/model_spec.h"}) {
    std::ifstream in(fs::path(MESHNN_SOURCE_DIR) / f);
    ASSERT_TRUE(in.good()) << f;
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      std::string code = line.substr(0, line.find("//"));
      std::transform(code.begin(), code.end(), code.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      for (const char* name : {"ltx", "bigvgan", "minimax", "h3", "gr00t"})
        EXPECT_EQ(code.find(name), std::string::npos) << f << ":" << line_no << " names " << name;
    }
  }
}

}  // namespace
}  // namespace meshnn
