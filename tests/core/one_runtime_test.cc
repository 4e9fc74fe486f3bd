// Issue 33: one runtime (src/runtime/). A source scan of src/, include/ and python/src/ finds
// exactly one definition of resolve_mesh (the mesh plan) and of run_on_mesh (the executor), both
// in src/runtime; one pool class (runtime::Pool: no RunnerPool, GraphPool or MeshRunners left);
// no run_split outside src/runtime; and no model name in the code of src/runtime (the runtime
// serves every model and knows none) nor in src/cli's (string literals count, comments do not:
// the audio commands are clients of AudioModel and take their models, help lists included, from
// the registry, and the policy command and the model commands it keeps are clients of PolicyModel;
// no file of src/cli is left out).
#include <gtest/gtest.h>
#include <unistd.h>

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

// "path:line" of every match of `re` in the code (comments blanked) of the product files under
// root, paths relative to root.
std::vector<std::string> matches(const fs::path& root, const std::regex& re,
                                 std::initializer_list<const char*> dirs) {
  std::vector<std::string> found;
  for (const fs::path& file : test::source_files(root, dirs)) {
    const std::string code = test::code_without_comments(file);
    const std::string rel = fs::relative(file, root).string();
    for (auto it = std::sregex_iterator(code.begin(), code.end(), re); it != std::sregex_iterator();
         ++it)
      found.push_back(rel + ":" + std::to_string(test::line_at(code, it->position(0))));
  }
  return found;
}

// A function definition named `name` (free or qualified): a return type, the name, its
// parameters and an opening brace.
std::regex definition_of(const std::string& name) {
  return std::regex(R"([\w:>&*]\s+(\w+::)*)" + name + R"(\s*\([^;{}()]*\)\s*(const\s*)?\{)");
}

struct Findings {
  std::vector<std::string> resolve_mesh, run_on_mesh, pools, old_owners, run_split, model_names;
  std::vector<std::string> cli_model_names;
};

Findings scan(const fs::path& root) {
  const auto product = {"src", "include", "python/src"};
  Findings f;
  f.resolve_mesh = matches(root, definition_of("resolve_mesh"), product);
  f.run_on_mesh = matches(root, definition_of("run_on_mesh"), product);
  f.pools = matches(root, std::regex(R"(\b(class|struct)\s+\w*Pool\b\s*[:{])"), product);
  f.old_owners = matches(root, std::regex(R"(\b(RunnerPool|GraphPool|MeshRunners)\b)"), product);
  for (const std::string& m : matches(root, std::regex(R"(\brun_split\b)"), product))
    if (m.rfind("src/runtime/", 0) != 0) f.run_split.push_back(m);
  const std::regex model_name(R"(ltx|bigvgan|minimax|h3|gr00t)", std::regex::icase);
  f.model_names = matches(root, model_name, {"src/runtime"});
  f.cli_model_names = matches(root, model_name, {"src/cli"});
  return f;
}

std::string joined(const std::vector<std::string>& v) {
  std::ostringstream s;
  for (const std::string& x : v) s << "\n  " << x;
  return s.str();
}

bool all_in_runtime(const std::vector<std::string>& v) {
  for (const std::string& x : v)
    if (x.rfind("src/runtime/", 0) != 0) return false;
  return true;
}

TEST(OneRuntime, OnePlanOneExecutorOnePool) {
  const Findings f = scan(MESHNN_SOURCE_DIR);
  EXPECT_EQ(f.resolve_mesh.size(), 1u) << joined(f.resolve_mesh);
  EXPECT_TRUE(all_in_runtime(f.resolve_mesh)) << joined(f.resolve_mesh);
  EXPECT_EQ(f.run_on_mesh.size(), 1u) << joined(f.run_on_mesh);
  EXPECT_TRUE(all_in_runtime(f.run_on_mesh)) << joined(f.run_on_mesh);
  EXPECT_EQ(f.pools.size(), 1u) << "one pool class, runtime::Pool:" << joined(f.pools);
  EXPECT_TRUE(all_in_runtime(f.pools)) << joined(f.pools);
  EXPECT_TRUE(f.old_owners.empty()) << joined(f.old_owners);
  EXPECT_TRUE(f.run_split.empty()) << joined(f.run_split);
  EXPECT_TRUE(f.model_names.empty()) << "model names in src/runtime:" << joined(f.model_names);
  EXPECT_TRUE(f.cli_model_names.empty()) << "model names in src/cli:" << joined(f.cli_model_names);
}

// The scan finds what it is for (a tree made here): a second mesh plan and executor, another
// pool class, the old owners' names, run_split beside a model and a model name in the runtime or
// in a command of src/cli (a help string's too), while comments, calls (a lambda argument's body
// too) and declarations are not counted; a file named after a model is no exception.
TEST(OneRuntime, ScanFindsSecondOwners) {
  const fs::path root = fs::temp_directory_path() / ("meshnn-runtime-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "src/api");
  fs::create_directories(root / "src/runtime");
  fs::create_directories(root / "src/cli");
  auto write = [&](const char* file, const char* text) { std::ofstream(root / file) << text; };
  write("src/runtime/plan.cc",
        "MeshPlan resolve_mesh(const RunOptions& run,\n"                     // 1
        "                      const MeshRequest& r) {\n"                    // 2
        "  return p;  // ltx in a comment\n"                                 // 3
        "}\n"                                                                // 4
        "template <class T>\nclass Pool {\n};\n"                             // 5-7
        "auto run_on_mesh(const MeshPlan& plan, int x) {\n  return 1;\n}\n"  // 8-10
        "Tensor run_split(int a);\n"                                         // 11
        "const char* k = \"BigVGAN\";\n");                                   // 12
  write("src/api/a.cc",
        "// resolve_mesh(run, r) { in a comment\n"                             // 1
        "MeshConfig resolve_mesh(const RunOptions& run, int64_t n) {\n"        // 2
        "  return runtime::resolve_mesh(run, r).mesh;\n"                       // 3
        "}\n"                                                                  // 4
        "Tensor Served::run_on_mesh(const Tensor& x) const {\n}\n"             // 5-6
        "class GraphPool {\n};\n"                                              // 7-8
        "Tensor y = h3::run_split(mc, split, B, part);\n"                      // 9
        "return runtime::run_on_mesh(plan, c, [&](int r) { return 1; });\n");  // 10
  write("src/cli/vocode.cc",
        "// meshnn vocode: NVIDIA BigVGAN in a comment\n"                       // 1
        "const AudioModel m = AudioModel::load(path, o);\n"                     // 2
        "app.add_subcommand(\"vocode\", \"Run an NVIDIA BigVGAN vocoder\");\n"  // 3
        "const auto d = LtxAudioDecoder::random(seed);  // LTX\n");             // 4
  write("src/cli/stream_frame.h", "//   MiniMax-H3 latents\nint items = 2;  // H3\n");
  write("src/cli/audio_decode.cc", "  \"(a stereo H3 stream is 2 items)\"\n");
  write("src/cli/gr00t_policy.cc",
        "// no model in a comment\nauto p = gr00t::Policy::load(path);\n");
  const Findings f = scan(root);
  fs::remove_all(root);
  using V = std::vector<std::string>;
  EXPECT_EQ(f.resolve_mesh, (V{"src/api/a.cc:2", "src/runtime/plan.cc:1"}));
  EXPECT_EQ(f.run_on_mesh, (V{"src/api/a.cc:5", "src/runtime/plan.cc:8"}));
  EXPECT_EQ(f.pools, (V{"src/api/a.cc:7", "src/runtime/plan.cc:6"}));
  EXPECT_EQ(f.old_owners, (V{"src/api/a.cc:7"}));
  EXPECT_EQ(f.run_split, (V{"src/api/a.cc:9"}));
  EXPECT_EQ(f.model_names, (V{"src/runtime/plan.cc:12"}));
  EXPECT_EQ(f.cli_model_names, (V{"src/cli/audio_decode.cc:1", "src/cli/gr00t_policy.cc:2",
                                  "src/cli/vocode.cc:3", "src/cli/vocode.cc:4"}));
}

}  // namespace
}  // namespace meshnn
