// Dependencies point down (docs/architecture.md, "Layers"), checked on the source tree: the CLI is
// a client of the public API, the server (src/serve, meshnn-serve) too plus the CLI's shared
// helpers, the CLI holds no server file and includes no Boost, the oneDNN backend uses nothing
// above it, and the installed headers need nothing but each other and the standard library. Each
// failure names file:line.
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

// One #include directive: where it is ("src/cli/main.cc:12") and the name it includes.
struct Include {
  std::string where;
  std::string path;
  bool quoted = true;  // "…" (false: <…>)
};

// Every #include in the .cc / .h files under root/folder, in file and line order.
std::vector<Include> includes_in(const fs::path& root, const std::string& folder) {
  std::vector<Include> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(root / folder)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".cc" || ext == ".h")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      size_t i = line.find_first_not_of(" \t");
      if (i == std::string::npos || line[i] != '#') continue;
      i = line.find_first_not_of(" \t", i + 1);
      if (i == std::string::npos || line.compare(i, 7, "include") != 0) continue;
      i = line.find_first_of("\"<", i + 7);
      if (i == std::string::npos) continue;
      const size_t j = line.find(line[i] == '"' ? '"' : '>', i + 1);
      if (j == std::string::npos) continue;
      out.push_back({fs::relative(f, root).string() + ":" + std::to_string(line_no),
                     line.substr(i + 1, j - i - 1), line[i] == '"'});
    }
  }
  return out;
}

// The first path component of an include ("models" for "models/bigvgan/model.h", "" for "cstdio").
std::string top_folder(const std::string& path) {
  const size_t slash = path.find('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The folders of root/src: an include whose first component is one of them names an internal
// header (src/ is on the library's include path).
std::set<std::string> internal_folders(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(root / "src"))
    if (e.is_directory()) out.insert(e.path().filename().string());
  return out;
}

// src/cli is a program: it includes its own headers (cli/…) and public ones (meshnn/…) only.
// Third-party headers in <…> (CLI11, nlohmann, Boost) are fine; <models/…> would not be.
std::vector<std::string> cli_violations(const fs::path& root) {
  const std::set<std::string> internal = internal_folders(root);
  std::vector<std::string> bad;
  for (const Include& inc : includes_in(root, "src/cli")) {
    const std::string top = top_folder(inc.path);
    const bool ok = top == "meshnn" || top == "cli" || (!inc.quoted && !internal.count(top));
    if (!ok)
      bad.push_back(inc.where + " includes " + inc.path +
                    " (src/cli may include only meshnn/… public headers and its own cli/…)");
  }
  return bad;
}

// src/serve is the meshnn-serve program: public headers (meshnn/…), its own (serve/…), the
// library's api/, io/ and core/ internals, and of src/cli only the helpers both programs link
// (the meshnn_cli_common library of CMakeLists.txt). Third-party headers in <…> are fine.
std::vector<std::string> serve_violations(const fs::path& root) {
  static const std::set<std::string> allowed = {"meshnn", "serve", "api", "io", "core"};
  static const std::set<std::string> shared_cli = {"cli/numeric_option.h", "cli/audio_common.h",
                                                   "cli/stream_frame.h", "cli/batch_limit.h",
                                                   "cli/failure.h"};
  const std::set<std::string> internal = internal_folders(root);
  std::vector<std::string> bad;
  for (const Include& inc : includes_in(root, "src/serve")) {
    const std::string top = top_folder(inc.path);
    const bool ok =
        allowed.count(top) || shared_cli.count(inc.path) || (!inc.quoted && !internal.count(top));
    if (!ok)
      bad.push_back(inc.where + " includes " + inc.path +
                    " (src/serve may include meshnn/…, serve/…, api/, io/, core/ and the shared "
                    "cli/ helpers only)");
  }
  return bad;
}

// The CLI is not the server: no serve* file in src/cli and no Boost include there (meshnn links
// no Boost; `meshnn serve` runs meshnn-serve).
std::vector<std::string> server_code_in_cli(const fs::path& root) {
  std::vector<std::string> bad;
  for (const auto& e : fs::recursive_directory_iterator(root / "src/cli"))
    if (e.is_regular_file() && e.path().filename().string().rfind("serve", 0) == 0)
      bad.push_back(fs::relative(e.path(), root).string() + " is server code (src/serve/)");
  for (const Include& inc : includes_in(root, "src/cli"))
    if (top_folder(inc.path) == "boost")
      bad.push_back(inc.where + " includes " + inc.path + " (meshnn links no Boost)");
  return bad;
}

// src/dnnl is a backend: nothing from the layers above it (docs/architecture.md), internal
// (layers/…, models/…) or their public headers (meshnn/layers/…, meshnn/models/…).
std::vector<std::string> dnnl_violations(const fs::path& root) {
  static const std::set<std::string> above = {"api",    "cli",       "models", "graph",
                                              "layers", "streaming", "ops",    "kernels"};
  std::vector<std::string> bad;
  for (const Include& inc : includes_in(root, "src/dnnl")) {
    const std::string top = top_folder(inc.path);
    const std::string public_top = top == "meshnn" ? top_folder(inc.path.substr(7)) : "";
    if (above.count(top) || above.count(public_top))
      bad.push_back(inc.where + " includes " + inc.path +
                    " (src/dnnl is a backend: it may not use " +
                    (top == "meshnn" ? public_top : top) + "/, a layer above it)");
  }
  return bad;
}

// The installed headers: other public headers ("meshnn/…") and the standard library (<…> without
// a folder) only; no src/ header, oneDNN, MPI or nlohmann (a consumer has none of them).
std::vector<std::string> public_header_violations(const fs::path& root) {
  std::vector<std::string> bad;
  for (const Include& inc : includes_in(root, "include/meshnn")) {
    const bool ok = inc.quoted ? top_folder(inc.path) == "meshnn"
                               : inc.path.find('/') == std::string::npos && inc.path != "mpi.h";
    if (!ok)
      bad.push_back(
          inc.where + " includes " + inc.path +
          " (a public header may include only meshnn/… headers and the standard library)");
  }
  return bad;
}

// Benchmarks live under bench/ (meshnn-bench, bench/e2e): no bench* file in src/cli, and no
// benchmark code in the library (the CCL timing loops once were src/mesh/ccl_bench.cc and the
// installed include/meshnn/mesh/ccl_bench.h).
std::vector<std::string> benchmark_violations(const fs::path& root) {
  std::vector<std::string> bad;
  for (const auto& e : fs::recursive_directory_iterator(root / "src")) {
    const std::string name = e.path().filename().string();
    const bool in_cli = e.path().parent_path() == root / "src/cli";
    if (e.is_regular_file() &&
        ((in_cli && name.starts_with("bench")) || name.starts_with("ccl_bench")))
      bad.push_back(fs::relative(e.path(), root).string() + " (benchmarks live under bench/)");
  }
  for (const auto& e : fs::recursive_directory_iterator(root / "include/meshnn"))
    if (e.path().filename().string().starts_with("ccl_bench"))
      bad.push_back(fs::relative(e.path(), root).string() +
                    " (benchmark headers are internal to bench/e2e, not installed)");
  std::sort(bad.begin(), bad.end());
  return bad;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

int files_under(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST(Layering, CliIncludesOnlyPublicHeaders) {
  const fs::path root = MESHNN_SOURCE_DIR;
  ASSERT_GT(files_under(root / "src/cli"), 10);
  const std::vector<std::string> bad = cli_violations(root);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(Layering, ServeIncludesOnlyPublicSharedAndLibraryHeaders) {
  const fs::path root = MESHNN_SOURCE_DIR;
  ASSERT_GT(files_under(root / "src/serve"), 10);
  const std::vector<std::string> bad = serve_violations(root);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(Layering, CliHoldsNoServerCode) {
  const fs::path root = MESHNN_SOURCE_DIR;
  const std::vector<std::string> bad = server_code_in_cli(root);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(Layering, DnnlIncludesNothingFromTheLayersAbove) {
  const fs::path root = MESHNN_SOURCE_DIR;
  ASSERT_GT(files_under(root / "src/dnnl"), 4);
  const std::vector<std::string> bad = dnnl_violations(root);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(Layering, PublicHeadersIncludeOnlyPublicAndStandardHeaders) {
  const fs::path root = MESHNN_SOURCE_DIR;
  ASSERT_GT(files_under(root / "include/meshnn"), 10);
  const std::vector<std::string> bad = public_header_violations(root);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

TEST(Layering, BenchmarksLiveUnderBench) {
  const fs::path root = MESHNN_SOURCE_DIR;
  ASSERT_TRUE(fs::exists(root / "bench/e2e/main.cc"));
  const std::vector<std::string> bad = benchmark_violations(root);
  EXPECT_TRUE(bad.empty()) << joined(bad);
}

// The checks themselves catch what they are for, naming file:line (a tree made here: one good and
// one bad include per rule).
TEST(Layering, ChecksNameTheOffendingLine) {
  const fs::path root = fs::temp_directory_path() / ("meshnn-layering-" + std::to_string(getpid()));
  fs::remove_all(root);
  for (const char* d :
       {"src/cli", "src/serve", "src/dnnl", "src/models", "src/layers", "include/meshnn"})
    fs::create_directories(root / d);
  auto write = [&](const char* file, const char* text) { std::ofstream(root / file) << text; };
  write("src/cli/a.cc",
        "#include \"cli/commands.h\"\n#include <nlohmann/json.hpp>\n"
        "#include \"models/bigvgan/model.h\"\n  #  include <layers/conv.h>\n"
        "#include <boost/beast/http.hpp>\n");
  write("src/cli/serve_x.cc", "\n");
  write("src/serve/d.cc",
        "#include \"serve/http.h\"\n#include \"cli/numeric_option.h\"\n"
        "#include \"io/json.h\"\n#include <boost/asio.hpp>\n#include \"cli/commands.h\"\n"
        "#include \"models/bigvgan/model.h\"\n");
  write("src/dnnl/b.cc",
        "#include \"dnnl/matmul.h\"\n#include \"meshnn/core/tensor.h\"\n"
        "#include \"layers/conv_algorithm.h\"\n#include \"meshnn/models/gr00t_config.h\"\n");
  write("include/meshnn/c.h",
        "#include <string>\n#include \"meshnn/core/tensor.h\"\n#include <nlohmann/json.hpp>\n"
        "#include \"io/json.h\"\n");
  write("src/cli/bench_audio.cc", "");
  write("src/cli/run_bench.cc", "");  // bench in the name, not a bench* file: allowed
  fs::create_directories(root / "src/mesh");
  fs::create_directories(root / "include/meshnn/mesh");
  write("src/mesh/ccl_bench.cc", "");
  write("include/meshnn/mesh/ccl_bench.h", "");
  const std::vector<std::string> cli = cli_violations(root), dnnl = dnnl_violations(root),
                                 pub = public_header_violations(root),
                                 serve = serve_violations(root), in_cli = server_code_in_cli(root),
                                 bench = benchmark_violations(root);
  fs::remove_all(root);
  ASSERT_EQ(bench.size(), 3u) << joined(bench);
  EXPECT_EQ(bench[0].rfind("include/meshnn/mesh/ccl_bench.h (", 0), 0u) << bench[0];
  EXPECT_EQ(bench[1].rfind("src/cli/bench_audio.cc (", 0), 0u) << bench[1];
  EXPECT_EQ(bench[2].rfind("src/mesh/ccl_bench.cc (", 0), 0u) << bench[2];
  ASSERT_EQ(cli.size(), 2u) << joined(cli);
  EXPECT_EQ(cli[0].rfind("src/cli/a.cc:3 includes models/bigvgan/model.h", 0), 0u) << cli[0];
  EXPECT_EQ(cli[1].rfind("src/cli/a.cc:4 includes layers/conv.h", 0), 0u) << cli[1];
  ASSERT_EQ(serve.size(), 2u) << joined(serve);
  EXPECT_EQ(serve[0].rfind("src/serve/d.cc:5 includes cli/commands.h", 0), 0u) << serve[0];
  EXPECT_EQ(serve[1].rfind("src/serve/d.cc:6 includes models/bigvgan/model.h", 0), 0u) << serve[1];
  ASSERT_EQ(in_cli.size(), 2u) << joined(in_cli);
  EXPECT_EQ(in_cli[0].rfind("src/cli/serve_x.cc is server code", 0), 0u) << in_cli[0];
  EXPECT_EQ(in_cli[1].rfind("src/cli/a.cc:5 includes boost/beast/http.hpp", 0), 0u) << in_cli[1];
  ASSERT_EQ(dnnl.size(), 2u) << joined(dnnl);
  EXPECT_EQ(dnnl[0].rfind("src/dnnl/b.cc:3 includes layers/conv_algorithm.h", 0), 0u) << dnnl[0];
  EXPECT_EQ(dnnl[1].rfind("src/dnnl/b.cc:4 includes meshnn/models/gr00t_config.h", 0), 0u)
      << dnnl[1];
  ASSERT_EQ(pub.size(), 2u) << joined(pub);
  EXPECT_EQ(pub[0].rfind("include/meshnn/c.h:3 includes nlohmann/json.hpp", 0), 0u) << pub[0];
  EXPECT_EQ(pub[1].rfind("include/meshnn/c.h:4 includes io/json.h", 0), 0u) << pub[1];
}

}  // namespace
}  // namespace meshnn
