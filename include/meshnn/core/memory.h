// The tensor storage cache: freed blocks of ≥ 64 KiB are kept in size buckets and handed out again,
// to requests of their size or of up to 4× less (re-faulting fresh pages costs 8–16 µs per 4 KiB
// page, see core/tensor.cc). By default a block
// stays cached until reused (at most MESHNN_ALLOC_CACHE_MB bytes in all, default 8192): right for
// one model run over and over, but a long-running process that sees many input lengths keeps the
// blocks of every length it has ever seen. A maximum age bounds that: a block not reused within
// it is freed and its pages go back to the system.
#pragma once

#include <cstddef>
#include <cstdint>

namespace meshnn {

struct AllocationCacheStats {
  size_t cached_bytes = 0;     // bytes held in cached (free) blocks now
  size_t cached_blocks = 0;    // how many
  size_t limit_bytes = 0;      // the byte cap (MESHNN_ALLOC_CACHE_MB)
  double max_age_seconds = 0;  // 0 = no age limit
  uint64_t evicted_bytes = 0;  // freed by the age limit or release, since the start
};

AllocationCacheStats allocation_cache_stats();

// Blocks not reused within `seconds` are freed (checked as blocks come and go, at most every
// seconds / 4, and by trim_allocation_cache()); 0 turns the limit off (the default). seconds ≥ 0.
void set_allocation_cache_max_age(double seconds);

// Frees the cached blocks older than the maximum age now and returns the allocator's free pages
// to the system (an idle process shrinks too: call it from a timer); returns the bytes freed.
size_t trim_allocation_cache();

}  // namespace meshnn
