// meshnn bench SUB ...: the benchmarks are their own program, meshnn-bench (bench/e2e). This
// subcommand replaces the process with it (execv), passing the arguments after `bench` unchanged
// and a --comm-timeout given before `bench`. meshnn-bench is looked for next to this executable
// first, then on $PATH. Nothing runs before the exec but parsing: no MPI, no threads.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace meshnn::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProgram = "meshnn-bench";

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

// meshnn-bench beside /proc/self/exe, else the first one on $PATH; "" when there is none, with
// `looked` naming where it looked.
std::string find_meshnn_bench(std::string& looked) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / kProgram;
    if (is_executable(beside)) return beside.string();
    looked = beside.string() + ", ";
  }
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "";
  for (size_t b = 0; b <= path.size();) {
    size_t e = path.find(':', b);
    if (e == std::string::npos) e = path.size();
    const fs::path dir = e == b ? fs::path(".") : fs::path(path.substr(b, e - b));
    if (is_executable(dir / kProgram)) return (dir / kProgram).string();
    b = e + 1;
  }
  looked += "$PATH (" + (path.empty() ? std::string("unset") : path) + ")";
  return "";
}

// Shape: args = ["--comm-timeout" S]? + the arguments after `bench`; does not return on success.
void exec_meshnn_bench(const std::vector<std::string>& args) {
  std::string looked;
  const std::string program = find_meshnn_bench(looked);
  if (program.empty()) {
    std::fprintf(stderr,
                 "meshnn bench: %s not found: looked at %s; build it (cmake option "
                 "MESHNN_BUILD_BENCH_E2E) and keep it next to meshnn or on $PATH\n",
                 kProgram, looked.c_str());
    throw CLI::RuntimeError(1);
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  execv(program.c_str(), argv.data());
  std::fprintf(stderr, "meshnn bench: cannot execute %s: %s\n", program.c_str(),
               std::strerror(errno));
  throw CLI::RuntimeError(1);
}

const Registrar reg("bench", [](CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Benchmarks (median timings, ratios against baselines): runs meshnn-bench with the "
      "arguments that follow (meshnn bench --help lists its benchmarks)");
  cmd->prefix_command();  // everything after `bench` is meshnn-bench's, --help included
  cmd->set_help_flag();
  CLI::App* root = &app;
  cmd->callback([root, cmd] {
    std::vector<std::string> args;
    if (const CLI::Option* t = root->get_option_no_throw("--comm-timeout"); t && t->count() > 0)
      args = {"--comm-timeout", t->results().back()};
    for (const std::string& a : cmd->remaining()) args.push_back(a);
    exec_meshnn_bench(args);
  });
});

}  // namespace
}  // namespace meshnn::cli
