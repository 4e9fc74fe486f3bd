// Each meshnn subcommand lives in its own file under src/cli/ and registers itself:
//
//   static const meshnn::cli::Registrar reg("info", [](CLI::App& app) { ... add_subcommand ... });
//
// cli/program.cc adds every registered command in name order, so new commands need no edit
// elsewhere. meshnn-bench (bench/e2e/main.cc) registers its benchmarks through the same struct.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

namespace meshnn::cli {

using RegisterFn = std::function<void(CLI::App&)>;
std::map<std::string, RegisterFn>& command_registry();

struct Registrar {
  Registrar(const std::string& name, RegisterFn fn) { command_registry()[name] = std::move(fn); }
};

}  // namespace meshnn::cli
