// Faulting in fresh memory in one kernel walk. On these machines (a VM) the first write to a fresh
// 4 KiB page costs ~11 µs as a trap per page and ~5.7 µs when a range is faulted in by one
// madvise(MADV_POPULATE_WRITE) (measured, docs/benchmarks.md "Issue 34 (wave 16)"); faults do not
// get faster with more threads. Used for the tensor storage cache's fresh blocks, for the
// weights transformed at load and for the filter cache's entries.
#pragma once

#include <cstddef>

namespace meshnn {

// Faults in the whole pages inside [p, p + bytes) (zeroed, writable) when bytes ≥ 1 MiB; a no-op
// below that, under AddressSanitizer, and where the kernel lacks MADV_POPULATE_WRITE (< 5.14: the
// pages then fault on first write as before). The contents of already-resident pages are kept.
void populate_pages(void* p, size_t bytes);

// Maps in the whole pages inside [p, p + bytes) of a file mapping (read-only is fine) in one kernel
// walk (MADV_POPULATE_READ) instead of a fault per page, whatever the size; a no-op where the
// kernel lacks it (the pages then fault on first read).
void populate_pages_for_reading(const void* p, size_t bytes);

}  // namespace meshnn
