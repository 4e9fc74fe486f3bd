// The one main of meshnn and meshnn-bench (cli/program.h): the registered subcommands, the output
// check every command gets, unknown options, and the exit codes.
#include "cli/program.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/failure.h"
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
// The output options of a command: --out (the CLI's one spelling of the main output) and
// --log-std (audio-encode's second output).
bool is_output_option(const CLI::Option* o) {
  return o->check_lname("out") || o->check_lname("log-std");
}

// The value an option will have: what was given, else its default (demo's --out demo.wav).
std::vector<std::string> option_values(const CLI::Option* o) {
  if (o->count() > 0) return o->results();
  const std::string d = o->get_default_str();
  return d.empty() ? std::vector<std::string>{} : std::vector<std::string>{d};
}

// The one output-path check of every command, run after parsing and before any command's work:
// each output must be writable, must not be (after symlinks, hard links included) any file the
// command reads — every other option's value and, for a model path or a folder, the files in it
// that a loader opens (meshnn::cli::files_read_for) — and no two outputs may be the same file.
// "-" (stdout) is left to the command.
void check_outputs(const CLI::App* cmd) {
  std::vector<std::string> inputs;
  for (const CLI::Option* o : cmd->get_options())
    if (!is_output_option(o) && o->count() > 0)
      for (const std::string& v : o->results())
        for (std::string& f : meshnn::cli::files_read_for(v, o->check_lname("checkpoint")))
          inputs.push_back(std::move(f));
  std::vector<std::pair<std::string, std::string>> outputs;  // (where it resolves to, option)
  for (const CLI::Option* o : cmd->get_options()) {
    if (!is_output_option(o)) continue;
    const std::string option = "--" + o->get_lnames().front();
    for (const std::string& out : option_values(o)) {
      if (out == "-") continue;
      meshnn::io::check_output_path(out, inputs, option);
      const std::string at =
          std::filesystem::weakly_canonical(meshnn::io::resolve_output_path(out)).string();
      for (const auto& [seen, other] : outputs)
        MESHNN_CHECK(seen != at, option, " ", out, " is the same file as ", other,
                     ": two outputs cannot share a file");
      outputs.emplace_back(at, option + " " + out);
    }
  }
  for (const CLI::App* sub : cmd->get_subcommands()) check_outputs(sub);
}

// CLI11 reports a missing required option before an unknown one (`vocode --bogus` would answer
// "--checkpoint is required"): look for unknown long options first. Returns the first unknown
// option of the subcommand chain in argv, or "".
std::string first_unknown_option(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string tok = argv[i];
    if (tok == "--") break;
    if (tok.rfind("--", 0) != 0) {
      CLI::App* sub = nullptr;
      try {
        sub = cur->get_subcommand(tok);
      } catch (const CLI::OptionNotFound&) {
      }
      if (sub && sub->get_prefix_command())
        return "";  // `serve` / `bench`: the rest is their program's
      if (sub) cur = sub;
      continue;
    }
    const std::string name = tok.substr(0, tok.find('='));
    if (name == "--help") return "";
    if (cur->get_option_no_throw(name) == nullptr && app.get_option_no_throw(name) == nullptr)
      return cur == &app ? name : cur->get_name() + " " + name;
  }
  return "";
}
}  // namespace

namespace meshnn::cli {

int run_program(const Program& program, int argc, char** argv) {
  // Line-buffered stdout so results and the stderr progress lines stay in order when piped.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  meshnn::init_logging_from_env();
  CLI::App app{program.description};
  app.name(program.name);
  const std::string name = program.name;
  app.require_subcommand(1);
  app.add_option_function<double>(
         "--comm-timeout", [](double s) { meshnn::set_default_comm_timeout(s); },
         "liveness bound of every collective in seconds (default: MESHNN_COMM_TIMEOUT or 120; 0 = "
         "wait forever); give it before the subcommand")
      ->check(CLI::NonNegativeNumber);
  for (auto& [name, fn] : meshnn::cli::command_registry()) fn(app);
  // Runs once parsing is complete, before any subcommand's callback (CLI11 runs the main app's
  // parse-complete callback first).
  app.parse_complete_callback([&app] {
    for (const CLI::App* sub : app.get_subcommands()) check_outputs(sub);
  });
  // A temporary output file is removed when the process is interrupted.
  meshnn::io::remove_temp_files_on_signal();
  const std::string unknown = first_unknown_option(app, argc, argv);
  if (!unknown.empty()) {
    std::fprintf(stderr, "%s %s: unknown option (see --help)\n", name.c_str(), unknown.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own status (verify: 1 when a bound is missed)
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2 (CLI11's own codes are 100+); --help exits 0.
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    return meshnn::cli::report_failure(name, e);  // the exit code of core's error table
  }
  return 0;
}

}  // namespace meshnn::cli
