// The disk cache of transformed convolution filters (docs/filter_cache.md): the folder in use, what
// this process has done with it, and its entries (for `meshnn cache` and `meshnn info`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshnn {

// The folder in use (with its v<version> sub-folder), or "" when the cache is off; read from the
// environment at each call.
std::string filter_cache_dir();
// Where cached filters live while a model runs (MESHNN_FILTER_MEMORY, read at each call):
// "mapped", "private" or "background"; InvalidArgument for another value.
const char* filter_cache_memory();
struct FilterCacheStats {
  uint64_t hits = 0, misses = 0, stores = 0, rejected = 0;
  uint64_t bytes_mapped = 0, bytes_written = 0;
  // Entries' bytes copied into the process's own memory (MESHNN_FILTER_MEMORY=private or
  // background), and the background copies still queued or running.
  uint64_t bytes_private = 0, copies_pending = 0;
};
FilterCacheStats filter_cache_stats();

// Returns once every background copy queued so far (MESHNN_FILTER_MEMORY=background) is in place
// or given up, or after `timeout_seconds`; true when none is left. At once with other settings.
bool filter_cache_settle(double timeout_seconds = 600);

// The entries in `dir` (a folder as filter_cache_dir returns): file, bytes on disk, and the
// header's description ("" and valid = false for a file that is not a whole entry).
struct FilterCacheEntry {
  std::string file, what;
  uint64_t bytes = 0;
  bool valid = false;
};
std::vector<FilterCacheEntry> filter_cache_list(const std::string& dir);
// Deletes every entry and leftover temporary file in `dir`; returns the bytes freed.
uint64_t filter_cache_clear(const std::string& dir);

}  // namespace meshnn
