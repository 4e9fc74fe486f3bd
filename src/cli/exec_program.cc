// The subcommands that are programs of their own: `meshnn serve ARGS…` runs meshnn-serve
// (src/serve/, docs/serve.md) and `meshnn bench ARGS…` runs meshnn-bench (bench/e2e), with ARGS
// unchanged, so `meshnn serve --help` is meshnn-serve's help. They are their own binaries so that
// the CLI compiles no server or benchmark code and links no Boost. The program is looked for
// beside this binary (/proc/self/exe), then on $PATH, and replaces this process (execv): the same
// PID, so mpiexec, signals and process supervisors see the program itself. Only the command line
// is parsed before this runs: no thread is started and MPI is not initialised (the program's own
// MPI_Init under mpiexec needs that). `meshnn --comm-timeout S serve …` passes the bound on as
// the program's `--comm-timeout S`.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "meshnn/core/error.h"

namespace meshnn::cli {
namespace {

struct ExecProgram {
  const char* subcommand;    // "serve"
  const char* program;       // "meshnn-serve"
  const char* cmake_option;  // "MESHNN_BUILD_SERVE"
  const char* help;          // the subcommand's line in `meshnn --help`
};

// Where the program may be, in the order tried: beside this binary, then each $PATH entry (an
// empty entry is the working folder, as for execvp).
std::vector<std::string> candidates(const std::string& program) {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((self.parent_path() / program).string());
  const char* path = std::getenv("PATH");
  for (std::string rest = path ? path : ""; path && !rest.empty();) {
    const size_t colon = rest.find(':');
    const std::string dir = rest.substr(0, colon);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + program);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  return out;
}

// Replaces this process with `program ARGS` (argv[0]: the path run). Returns only by throwing
// when no candidate could be run, naming every place looked in.
void exec_program(const ExecProgram& p, const std::vector<std::string>& args) {
  std::fflush(nullptr);
  std::string looked;
  for (const std::string& path : candidates(p.program)) {
    looked += (looked.empty() ? "" : ", ") + path;
    if (::access(path.c_str(), X_OK) != 0) continue;
    std::vector<char*> argv{const_cast<char*>(path.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    looked += std::string(" (") + std::strerror(errno) + ")";  // execv returned: it failed
  }
  throw BackendError(detail::concat(
      "meshnn ", p.subcommand, " runs the ", p.program, " program, which was not found: looked in ",
      looked.empty() ? std::string("(no /proc/self/exe, no PATH)") : looked,
      " (build it with the CMake option ", p.cmake_option, "=ON and install it beside meshnn)"));
}

void add_exec_subcommand(CLI::App& app, const ExecProgram& p) {
  CLI::App* cmd = app.add_subcommand(p.subcommand, p.help);
  // Every argument after the subcommand, --help included, is the program's.
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->set_help_flag();
  cmd->callback([cmd, &app, p] {
    std::vector<std::string> args;
    const CLI::Option* timeout = app.get_option_no_throw("--comm-timeout");
    if (timeout && timeout->count() > 0) args = {"--comm-timeout", timeout->results().back()};
    for (const std::string& a : cmd->remaining()) args.push_back(a);
    exec_program(p, args);
  });
}

const Registrar serve_reg("serve", [](CLI::App& app) {
  add_exec_subcommand(app, {"serve", "meshnn-serve", "MESHNN_BUILD_SERVE",
                            "Serve the decoders over HTTP and WebSocket (docs/serve.md)"});
});

const Registrar bench_reg("bench", [](CLI::App& app) {
  add_exec_subcommand(
      app, {"bench", "meshnn-bench", "MESHNN_BUILD_BENCH_E2E",
            "Benchmarks (median timings, ratios against baselines): runs meshnn-bench with the "
            "arguments that follow (meshnn bench --help lists its benchmarks)"});
});

}  // namespace
}  // namespace meshnn::cli
