// Running the built `meshnn` binary (or any command line) from a test: its exit code and its
// stdout + stderr.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace meshnn::test {

inline std::string meshnn_binary() { return std::string(MESHNN_BINARY_DIR) + "/meshnn"; }

struct CliRun {
  int code = -1;       // the exit status; −1 when the command did not exit normally
  std::string output;  // stdout + stderr
};

// A shell command line → its exit status and output (stderr merged into stdout).
inline CliRun shell(const std::string& cmd) {
  CliRun r;
  std::FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// `meshnn <args>`.
inline CliRun run_meshnn(const std::string& args) { return shell(meshnn_binary() + " " + args); }

}  // namespace meshnn::test
