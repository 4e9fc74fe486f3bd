// Each meshnn subcommand lives in its own file under src/cli/ and registers itself:
//
//   static const meshnn::cli::Registrar reg("info", [](CLI::App& app) { ... add_subcommand ... });
//
// main.cc adds every registered command in name order, so new commands need no edit elsewhere.
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

// The shared `meshnn bench` parent; each benchmark file adds its own sub-subcommand to it.
inline CLI::App* bench_parent(CLI::App& app) {
  auto found = app.get_subcommands([](CLI::App* s) { return s->get_name() == "bench"; });
  if (!found.empty()) return found.front();
  CLI::App* b =
      app.add_subcommand("bench", "Benchmarks (median timings, ratios against baselines)");
  b->require_subcommand(1);
  return b;
}

}  // namespace meshnn::cli
