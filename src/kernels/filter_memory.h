// Where a layer's cached filters live while it runs: the MESHNN_FILTER_MEMORY switch, private
// copies made at load and the background copier (docs/filter_cache.md "Mapped or private").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/filter_cache.h"

namespace meshnn::kernels {

// Where a layer's cached filters live while it runs (MESHNN_FILTER_MEMORY).
// mapped (the default): in the entry file's page-cache pages, mapped — the fastest load.
// private: in the process's own memory — a found entry is copied in at load, a new one is made
// there and written to its file at commit. Costs the first write of every fresh page at load
// (a warm LTX-2.3 load, 1.3 GB of filters, 1.8 s instead of 0.5 s on these VMs), and is for
// long-running processes whose calls and small pushes re-read every filter: on this machine kind
// mapped page-cache pages read slower (LTX-2.3 8-frame pushes ~1.2-1.3x) than private ones
// (docs/filter_cache.md "Mapped or private").
// background: loads as mapped, then one low-priority thread copies each entry into the
// process's own memory and puts the copy in place of the file's pages at the same address
// (mremap), so the filters' pointers never change and a call running meanwhile reads the same
// bytes from either. A long-running process gets mapped's load and private's steady speed.
enum class FilterMemory { mapped, private_copy, background };
FilterMemory filter_memory();

// Anonymous memory for an entry's bytes (FilterMemory::private_copy), holding a copy of `from`
// when given; nullptr when it cannot be had. Faulted in and filled on all threads, or on the
// caller's only.
void* map_private(size_t bytes, const void* from = nullptr, bool all_threads = true);

// FilterMemory::background: queues an entry for the copier thread, which puts a private copy in
// place of its mapping at the same address (the entry is skipped if its last holder drops it
// first).
void copy_in_background(std::weak_ptr<const FilterBlob> blob);
uint64_t background_copies_pending();  // queued or being copied

// Bytes of entries now in the process's own memory (private at load, or copied in the background).
void count_private_filter_bytes(uint64_t bytes);
uint64_t private_filter_bytes();

}  // namespace meshnn::kernels
