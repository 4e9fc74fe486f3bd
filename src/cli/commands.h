// Each meshnn subcommand lives in its own file and registers itself on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace meshnn::cli {

void register_info(CLI::App& app);
void register_demo(CLI::App& app);

}  // namespace meshnn::cli
