// The disk cache of transformed filters: what the Winograd kernels compute from a layer's weights
// at load (the filter transform, and for native bf16 the packed GEMM matrices), kept in files that
// a later load maps from the page cache instead of computing it again.
//
// Why: on these machines most of a released-size load is the first write to each fresh page of
// the ~1.3 GB of transformed f32 filters (~1.5 s per GiB); mapping a file already in the page
// cache costs a fraction of that (docs/benchmarks.md "Issue 34 (wave 18)").
//
// Never silently stale: an entry is named by a 64-bit hash of everything its contents depend on —
// the format version, the kernel and its geometry, the arithmetic (f32, bf16 emulated, packed
// bf16) and every weight value — so changed weights are a different entry, never a wrong one. Every
// load checks the entry's header and the checksum of its contents; an entry that fails is deleted
// and rebuilt. kFilterCacheVersion changes whenever a transform, a packing layout or the key does.
//
// Where: MESHNN_FILTER_CACHE = a folder, or off; unset: $XDG_CACHE_HOME/meshnn/filters, else
// $HOME/.cache/meshnn/filters. Entries live in its sub-folder v<version>. Only layers whose
// filters take at least kFilterCacheMinBytes are cached (tiny layers are not worth a file each;
// MESHNN_FILTER_CACHE_MIN_KB sets another bound).
// `meshnn cache` lists and clears it (meshnn/core/filter_cache.h: the folder, counters, entries);
// docs/filter_cache.md describes the format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/filter_cache.h"

namespace meshnn::kernels {

enum class FilterMemory;  // kernels/filter_memory.h

constexpr uint32_t kFilterCacheVersion = 1;
constexpr size_t kFilterCacheMinBytes = size_t{1} << 16;

// The smallest entry cached: MESHNN_FILTER_CACHE_MIN_KB KiB, default kFilterCacheMinBytes.
size_t filter_cache_min_bytes();

// 64-bit hash of n bytes (4 independent multiply-rotate lanes, then an avalanche). Big inputs
// are hashed as 4 MiB chunks in parallel (OpenMP) and the chunk hashes hashed again: the value
// does not depend on the thread count.
uint64_t hash_bytes(const void* data, size_t n, uint64_t seed = 0);

// Builds an entry's key from what its contents depend on.
class FilterKey {
 public:
  explicit FilterKey(const char* kernel);  // e.g. "winograd1d"
  FilterKey& add(int64_t v);
  FilterKey& add(const float* values, size_t n);
  FilterKey& add_bytes(const void* data, size_t n);
  uint64_t value() const { return h_; }

 private:
  uint64_t h_;
};

// The weights a kernel makes its filters from, possibly not made yet. Plain values: the entry's
// key hashes them. Or made on demand, with an `origin`: a 64-bit name of the weights by what they
// are made from (MappedWeight in meshnn/layers/state_dict.h: the checkpoint's stored bytes and the
// steps that turn them into f32 weights), which the key hashes instead, so that a cache hit never
// makes them (no bf16 → f32 copy, weight-norm fold or polyphase rearrangement at load).
class FilterWeights {
 public:
  FilterWeights(const float* values) : values_(values) {}  // NOLINT: plain values convert
  FilterWeights(std::function<const float*()> make, std::function<uint64_t()> origin)
      : make_(std::move(make)), origin_(std::move(origin)) {}
  // The values (made on the first call, then kept by whoever `make` reads from).
  const float* values() const {
    if (values_ == nullptr && make_) values_ = make_();
    return values_;
  }
  bool has_origin() const { return static_cast<bool>(origin_); }
  uint64_t origin() const { return origin_(); }
  // Adds what names these weights to a key: the origin when there is one, else the n values.
  void add_to(FilterKey& key, size_t n) const;

 private:
  mutable const float* values_ = nullptr;
  std::function<const float*()> make_;
  std::function<uint64_t()> origin_;
};

// One entry's memory: the file's mapping (read-only for a found entry; shared, read-write until
// commit() for a new one), or with FilterMemory::private_copy (and FilterMemory::background once
// its copy is in, at the same address) an anonymous mapping holding the same bytes (header page
// included; kernels/filter_memory.h). `bytes` of contents at a page-aligned `data`, unmapped with
// the last reference.
struct FilterBlob {
  const void* data = nullptr;
  size_t bytes = 0;
  ~FilterBlob();
  void* map_base = nullptr;
  size_t map_bytes = 0;
};

// The entry for key with exactly `bytes` of contents, mapped and checked (header, size,
// checksum); nullptr when the cache is off, the entry is absent, or it failed a check (then it is
// deleted, with a warning).
std::shared_ptr<const FilterBlob> filter_cache_find(uint64_t key, size_t bytes);

// A new entry made in place: a temporary file of the entry's size in the cache folder, mapped
// read-write and shared, in which the caller makes the layer's filters and from which the layer
// then runs (so a first load writes its filters once, into the page cache, not into memory and
// then again into a file). With FilterMemory::private_copy the filters are made in anonymous
// memory instead and written to the file at commit. commit() checksums the contents, writes the
// header and renames the file into place, so a reader sees a whole entry or none; the memory stays
// valid either way. A writer destroyed uncommitted removes its file.
class FilterEntryWriter {
 public:
  // nullptr when the cache is off or the file cannot be made (a read-only or full disk: one
  // warning per folder, then that folder is not tried again by this process); the caller then
  // makes its filters in memory.
  static std::unique_ptr<FilterEntryWriter> create(uint64_t key, size_t bytes);
  ~FilterEntryWriter();
  FilterEntryWriter(const FilterEntryWriter&) = delete;
  FilterEntryWriter& operator=(const FilterEntryWriter&) = delete;
  void* data() const { return const_cast<void*>(blob_->data); }
  // The mapping, for views into it: it lives as long as they do.
  std::shared_ptr<const FilterBlob> blob() const { return blob_; }
  // `what` describes the layer for `meshnn cache list`. False (with a warning) when the entry
  // could not be finished; the contents stay usable.
  bool commit(const std::string& what);

 private:
  FilterEntryWriter() = default;
  uint64_t key_ = 0;
  int fd_ = -1;
  // filter_memory() at create: private_copy makes the filters in anonymous memory and writes the
  // file at commit; background queues the committed entry for the copier.
  FilterMemory memory_{};
  std::string tmp_, path_, dir_;
  std::shared_ptr<FilterBlob> blob_;
};
// Where part i starts in an entry made of parts of these sizes: each at a multiple of 64 bytes.
size_t filter_part_offset(const std::vector<size_t>& sizes, size_t i);

}  // namespace meshnn::kernels
