// meshnn serve ARGS…: runs the meshnn-serve program (src/serve/, docs/serve.md) with ARGS
// unchanged, so `meshnn serve --help` is meshnn-serve's help. The server is its own binary so that
// the CLI compiles no server code and links no Boost. meshnn-serve is looked for beside this binary
// (/proc/self/exe), then on $PATH, and replaces this process (execv): the same PID, so mpiexec,
// signals and process supervisors see the server itself. main.cc only parses the command line
// before this runs: no thread is started and MPI is not initialised (meshnn-serve's own
// MPI_Init under mpiexec needs that). `meshnn --comm-timeout S serve …` passes the bound on as
// meshnn-serve's `--comm-timeout S`.
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

constexpr const char* kServeProgram = "meshnn-serve";

// Where meshnn-serve may be, in the order tried: beside this binary, then each $PATH entry (an
// empty entry is the working folder, as for execvp).
std::vector<std::string> serve_candidates() {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((self.parent_path() / kServeProgram).string());
  const char* path = std::getenv("PATH");
  for (std::string rest = path ? path : ""; path && !rest.empty();) {
    const size_t colon = rest.find(':');
    const std::string dir = rest.substr(0, colon);
    out.push_back((dir.empty() ? std::string(".") : dir) + "/" + kServeProgram);
    rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  }
  return out;
}

// Replaces this process with meshnn-serve ARGS (argv[0]: the path run). Returns only by throwing
// when no candidate could be run, naming every place looked in.
void exec_serve(const std::vector<std::string>& args) {
  std::fflush(nullptr);
  std::string looked;
  for (const std::string& path : serve_candidates()) {
    looked += (looked.empty() ? "" : ", ") + path;
    if (::access(path.c_str(), X_OK) != 0) continue;
    std::vector<char*> argv{const_cast<char*>(path.c_str())};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    looked += std::string(" (") + std::strerror(errno) + ")";  // execv returned: it failed
  }
  throw BackendError(detail::concat(
      "meshnn serve runs the ", kServeProgram, " program, which was not found: looked in ",
      looked.empty() ? std::string("(no /proc/self/exe, no PATH)") : looked,
      " (build it with the CMake option MESHNN_BUILD_SERVE=ON and install it beside meshnn)"));
}

const Registrar reg("serve", [](CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve the decoders over HTTP and WebSocket (docs/serve.md)");
  // Every argument after `serve`, --help included, is meshnn-serve's.
  cmd->prefix_command();
  cmd->allow_extras();
  cmd->set_help_flag();
  cmd->callback([cmd, &app] {
    std::vector<std::string> args;
    const CLI::Option* timeout = app.get_option_no_throw("--comm-timeout");
    if (timeout && timeout->count() > 0) args = {"--comm-timeout", timeout->results().front()};
    for (const std::string& a : cmd->remaining()) args.push_back(a);
    exec_serve(args);
  });
});

}  // namespace
}  // namespace meshnn::cli
