// meshnn cache: the transformed-filter disk cache (meshnn/core/filter_cache.h,
// docs/filter_cache.md): where it is, what it holds, and clearing it.
#include <cstdio>

#include "cli/commands.h"
#include "meshnn/core/filter_cache.h"

namespace meshnn::cli {

namespace {
const Registrar reg("cache", [](CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "cache",
      "List or clear the disk cache of transformed filters (MESHNN_FILTER_CACHE: a folder or off)");
  auto* list = cmd->add_subcommand("list", "List the entries (the default)");
  auto* clear = cmd->add_subcommand("clear", "Delete every entry");
  cmd->require_subcommand(0, 1);
  cmd->callback([cmd, clear] {
    const std::string dir = filter_cache_dir();
    if (dir.empty()) {
      std::printf("filter cache: off\n");
      return;
    }
    if (cmd->got_subcommand(clear)) {
      const uint64_t freed = filter_cache_clear(dir);
      std::printf("filter cache: %s: cleared, %.1f MB freed\n", dir.c_str(), freed / 1e6);
      return;
    }
    const auto entries = filter_cache_list(dir);
    uint64_t total = 0;
    for (const auto& e : entries) total += e.bytes;
    std::printf("filter cache: %s: %zu entries, %.1f MB\n", dir.c_str(), entries.size(),
                total / 1e6);
    for (const auto& e : entries)
      std::printf("  %s  %9.1f MB  %s\n", e.file.c_str(), e.bytes / 1e6,
                  e.valid ? e.what.c_str() : "(not a whole entry: a write in progress or broken)");
  });
  (void)list;
});
}  // namespace

}  // namespace meshnn::cli
