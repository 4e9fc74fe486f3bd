// meshnn-bench: the end-to-end benchmarks (median timings, ratios against PyTorch and other
// baselines), one subcommand per file of bench/e2e registered through cli::Registrar. `meshnn
// bench SUB ...` executes this binary with the same arguments. Exit codes as meshnn's: 0 ok, 1
// runtime error (meshnn::Error), 2 usage error; under a multi-process MPI launch a runtime error
// on any rank aborts the whole job.
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/preflight.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"
#include "meshnn/io/output.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn::cli {
std::map<std::string, RegisterFn>& command_registry() {
  static std::map<std::string, RegisterFn> r;
  return r;
}
}  // namespace meshnn::cli

namespace {

int fail(const std::string& message) {
  meshnn::abort_job_if_distributed(1, message);
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

// The output-path check meshnn runs for every command, for the benchmarks' --out (bench
// precision): writable, not a file the command reads (another option's value or the files of a
// model path), before any work.
void check_outputs(const CLI::App* cmd) {
  std::vector<std::string> inputs;
  for (const CLI::Option* o : cmd->get_options())
    if (!o->check_lname("out") && o->count() > 0)
      for (const std::string& v : o->results())
        for (std::string& f : meshnn::cli::files_read_for(v, o->check_lname("checkpoint")))
          inputs.push_back(std::move(f));
  for (const CLI::Option* o : cmd->get_options())
    if (o->check_lname("out"))
      for (const std::string& out : o->results())
        if (out != "-") meshnn::io::check_output_path(out, inputs, "--out");
}

}  // namespace

int main(int argc, char** argv) {
  // Line-buffered stdout so results and the stderr progress lines stay in order when piped.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  meshnn::init_logging_from_env();
  CLI::App app{
      "meshnn-bench — meshnn's end-to-end benchmarks (median timings, ratios against "
      "baselines)"};
  app.name("meshnn-bench");
  app.require_subcommand(1);
  app.add_option_function<double>(
         "--comm-timeout", [](double s) { meshnn::set_default_comm_timeout(s); },
         "liveness bound of every collective in seconds (default: MESHNN_COMM_TIMEOUT or 120; 0 = "
         "wait forever); give it before the subcommand")
      ->check(CLI::NonNegativeNumber);
  for (auto& [name, fn] : meshnn::cli::command_registry()) fn(app);
  app.parse_complete_callback([&app] {
    for (const CLI::App* sub : app.get_subcommands()) check_outputs(sub);
  });
  meshnn::io::remove_temp_files_on_signal();
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // usage errors exit 2 (CLI11's own codes are 100+); --help 0
    return rc == 0 ? 0 : 2;
  } catch (const meshnn::Error& e) {
    return fail(std::string("meshnn-bench: error: ") + e.what());
  } catch (const std::bad_alloc&) {
    return fail(
        "meshnn-bench: error: out of memory (an input or option asks for more memory than the "
        "machine has)");
  } catch (const std::exception& e) {
    return fail(std::string("meshnn-bench: internal error: ") + e.what());
  }
  return 0;
}
