// meshnn command line. Exit codes: 0 ok, 1 runtime error (meshnn::Error), 2 usage error. Under a
// multi-process MPI launch a runtime error on any rank aborts the whole job (MPI_Abort, code 1).
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {
std::map<std::string, RegisterFn>& command_registry() {
  static std::map<std::string, RegisterFn> r;
  return r;
}
}  // namespace meshnn::cli

namespace {
// Under a multi-process MPI launch an error may escape on one rank only while the others wait in
// a collective: print it with the rank and abort the whole job (does not return). Otherwise print
// it and exit with 1.
int fail(const std::string& message) {
  meshnn::abort_job_if_distributed(1, message);
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  // Line-buffered stdout so results and the stderr progress lines stay in order when piped.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  meshnn::init_logging_from_env();
  CLI::App app{"meshnn — sharded inference runtime for audio decoders and robotics adapters"};
  app.require_subcommand(1);
  app.add_option_function<double>(
         "--comm-timeout", [](double s) { meshnn::set_default_comm_timeout(s); },
         "liveness bound of every collective in seconds (default: MESHNN_COMM_TIMEOUT or 120; 0 = "
         "wait forever); give it before the subcommand")
      ->check(CLI::NonNegativeNumber);
  for (auto& [name, fn] : meshnn::cli::command_registry()) fn(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const meshnn::Error& e) {
    return fail(std::string("meshnn: error: ") + e.what());
  } catch (const std::exception& e) {
    return fail(std::string("meshnn: internal error: ") + e.what());
  }
  return 0;
}
