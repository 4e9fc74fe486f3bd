// The transformed-filter disk cache (kernels/filter_cache.h): keys, the entry file format, finding
// (map + check) and storing (temporary file + rename).
//
// An entry file: a 4096-byte header (EntryHeader below, zeros after it), then the contents. The
// checksum is hash_bytes over the contents with the key as seed.
#include "kernels/filter_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "core/env.h"
#include "core/populate.h"
#include "io/file_util.h"
#include "kernels/filter_memory.h"
#include "meshnn/core/error.h"
#include "meshnn/core/log.h"
#include "meshnn/core/profile.h"

namespace meshnn::kernels {

namespace fs = std::filesystem;

namespace {

// ---- hashing -----------------------------------------------------------------------------------

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull, kP4 = 0x85EBCA77C2B2AE63ull;
constexpr size_t kChunk = size_t{4} << 20;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t mix_lane(uint64_t acc, uint64_t v) { return rotl(acc + v * kP2, 31) * kP1; }
inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

// One pass over n ≤ a chunk of bytes: four lanes of 8-byte words, the tail byte by byte.
uint64_t hash_run(const unsigned char* p, size_t n, uint64_t seed) {
  uint64_t l0 = seed + kP1 + kP2, l1 = seed + kP2, l2 = seed, l3 = seed - kP1;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, 32);
    l0 = mix_lane(l0, w[0]);
    l1 = mix_lane(l1, w[1]);
    l2 = mix_lane(l2, w[2]);
    l3 = mix_lane(l3, w[3]);
  }
  uint64_t h = rotl(l0, 1) + rotl(l1, 7) + rotl(l2, 12) + rotl(l3, 18) + n;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = rotl(h ^ mix_lane(0, w), 27) * kP1 + kP4;
  }
  for (; i < n; ++i) h = rotl(h ^ (p[i] * kP3), 11) * kP1;
  return avalanche(h);
}

// ---- the folder --------------------------------------------------------------------------------

struct Counters {
  std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, rejected{0}, mapped{0}, written{0};
  std::mutex failed_mutex;
  std::string failed_dir;  // a folder a store failed in: not tried again by this process
};
Counters& counters() {
  static Counters c;
  return c;
}

constexpr char kMagic[8] = {'M', 'E', 'S', 'H', 'N', 'N', 'F', 'C'};
constexpr size_t kHeaderBytes = 4096;

struct EntryHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t key;
  uint64_t bytes;     // contents
  uint64_t checksum;  // hash_bytes(contents, bytes, key)
  char what[200];     // the layer, for `meshnn cache list`
};
static_assert(sizeof(EntryHeader) <= kHeaderBytes);

std::string entry_name(uint64_t key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016" PRIx64 ".mfc", key);
  return name;
}

bool read_header(int fd, EntryHeader& h) {
  return ::pread(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h) &&
         std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.version == kFilterCacheVersion &&
         h.header_bytes == kHeaderBytes;
}

// Asks for an entry's page-cache pages in 2 MiB folios (then populated in one kernel walk,
// core/populate.h). Where the file system keeps large folios (ext4 on recent kernels) a 2 MiB
// folio is mapped by one PMD entry: on this project's VMs the checksum's first pass over 1.3 GB of
// 4 KiB-mapped filters took 0.49-0.52 s, over PMD-mapped ones 0.13 s (docs/benchmarks.md "Issue
// 34 (wave 19)"). The writer asks too, so the folios are large from the start; elsewhere it is a
// hint that changes nothing.
void ask_for_huge_folios(void* base, size_t bytes) { (void)::madvise(base, bytes, MADV_HUGEPAGE); }

void reject(const std::string& path, const char* why) {
  counters().rejected++;
  log_warn("filter cache: " + path + " " + why + "; deleting it (the layer is transformed again)");
  ::unlink(path.c_str());
}

}  // namespace

// ---- public ------------------------------------------------------------------------------------

uint64_t hash_bytes(const void* data, size_t n, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (n <= kChunk) return hash_run(p, n, seed);
  const int64_t chunks = static_cast<int64_t>((n + kChunk - 1) / kChunk);
  std::vector<uint64_t> h(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const size_t at = static_cast<size_t>(c) * kChunk;
    h[static_cast<size_t>(c)] = hash_run(p + at, std::min(kChunk, n - at), seed + c);
  }
  return hash_run(reinterpret_cast<const unsigned char*>(h.data()), h.size() * 8, seed ^ n);
}

FilterKey::FilterKey(const char* kernel)
    : h_(hash_run(reinterpret_cast<const unsigned char*>(kernel), std::strlen(kernel),
                  kFilterCacheVersion)) {}
FilterKey& FilterKey::add(int64_t v) {
  h_ = hash_run(reinterpret_cast<const unsigned char*>(&v), sizeof v, h_);
  return *this;
}
FilterKey& FilterKey::add(const float* values, size_t n) {
  return add_bytes(values, n * sizeof(float));
}
FilterKey& FilterKey::add_bytes(const void* data, size_t n) {
  h_ = avalanche(h_ ^ hash_bytes(data, n, h_) * kP1);
  return *this;
}

void FilterWeights::add_to(FilterKey& key, size_t n) const {
  // The values are hashed as before origins existed (entries keyed by them stay valid); an origin
  // goes in behind a marker of its own.
  if (has_origin())
    key.add(int64_t{0x6f726967696e}).add(static_cast<int64_t>(origin()));  // "origin"
  else
    key.add(values(), n);
}

size_t filter_cache_min_bytes() {
  const auto v = env_value(EnvSwitch::filter_cache_min_kb);
  if (!v) return kFilterCacheMinBytes;
  char* end = nullptr;
  const unsigned long long kb = std::strtoull(v->c_str(), &end, 10);
  MESHNN_CHECK_AS(InvalidArgument, end != v->c_str() && *end == '\0',
                  "MESHNN_FILTER_CACHE_MIN_KB=", *v, ": expected a whole number of KiB");
  return static_cast<size_t>(kb) * 1024;
}

FilterBlob::~FilterBlob() {
  if (map_base) ::munmap(map_base, map_bytes);
}

std::shared_ptr<const FilterBlob> filter_cache_find(uint64_t key, size_t bytes) {
  const std::string dir = filter_cache_dir();
  if (dir.empty()) return nullptr;
  const std::string path = dir + "/" + entry_name(key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    counters().misses++;
    return nullptr;
  }
  struct stat st {};
  EntryHeader h{};
  const bool whole = ::fstat(fd, &st) == 0 && read_header(fd, h) && h.key == key &&
                     h.bytes == bytes && static_cast<size_t>(st.st_size) == kHeaderBytes + bytes;
  if (!whole) {
    ::close(fd);
    reject(path, "is not a whole entry of this version and size");
    return nullptr;
  }
  const size_t map_bytes = kHeaderBytes + bytes;
  void* base = nullptr;
  {
    ProfileScope prof("load.filter_cache_map");
    base = ::mmap(nullptr, map_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base != MAP_FAILED) {
      ask_for_huge_folios(base, map_bytes);
      populate_pages_for_reading(base, map_bytes);
    }
  }
  ::close(fd);
  const FilterMemory memory = filter_memory();
  if (base != MAP_FAILED && memory == FilterMemory::private_copy) {
    ProfileScope prof("load.filter_cache_copy");
    if (void* own = map_private(map_bytes, base)) {
      ::munmap(base, map_bytes);
      base = own;
      count_private_filter_bytes(bytes);
    }
  }
  if (base == MAP_FAILED) {
    counters().misses++;
    log_warn("filter cache: cannot map " + path + ": " + std::strerror(errno));
    return nullptr;
  }
  auto blob = std::make_shared<FilterBlob>();
  blob->map_base = base;
  blob->map_bytes = map_bytes;
  blob->data = static_cast<const char*>(base) + kHeaderBytes;
  blob->bytes = bytes;
  uint64_t sum = 0;
  {
    ProfileScope prof("load.filter_cache_checksum");
    sum = hash_bytes(blob->data, bytes, key);
  }
  if (sum != h.checksum) {
    reject(path, "does not match its checksum");
    return nullptr;
  }
  counters().hits++;
  counters().mapped += bytes;
  if (memory == FilterMemory::background) copy_in_background(blob);
  return blob;
}

size_t filter_part_offset(const std::vector<size_t>& sizes, size_t i) {
  size_t at = 0;
  for (size_t j = 0; j < i; ++j) at = (at + sizes[j] + 63) / 64 * 64;
  return at;
}

namespace {

// Remembers a folder a store failed in (warned once); true when it already had.
bool store_failed_before(const std::string& dir) {
  Counters& c = counters();
  std::lock_guard<std::mutex> lock(c.failed_mutex);
  return c.failed_dir == dir;
}
void store_failed(const std::string& dir, const std::string& why) {
  Counters& c = counters();
  std::lock_guard<std::mutex> lock(c.failed_mutex);
  if (c.failed_dir != dir)
    log_warn("filter cache: cannot store in " + dir + " (" + why +
             "); loads in this process transform their filters without storing them");
  c.failed_dir = dir;
}

}  // namespace

std::unique_ptr<FilterEntryWriter> FilterEntryWriter::create(uint64_t key, size_t bytes) {
  const std::string dir = filter_cache_dir();
  if (dir.empty() || store_failed_before(dir)) return nullptr;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    store_failed(dir, ec.message());
    return nullptr;
  }
  static std::atomic<uint64_t> serial{0};
  std::unique_ptr<FilterEntryWriter> w(new FilterEntryWriter());
  w->key_ = key;
  w->dir_ = dir;
  w->path_ = dir + "/" + entry_name(key);
  w->tmp_ = w->path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  w->fd_ = ::open(w->tmp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (w->fd_ < 0) {
    store_failed(dir, std::strerror(errno));
    return nullptr;
  }
  // The blocks first: a full disk fails here, not as a SIGBUS on a write into the mapping.
  const size_t map_bytes = kHeaderBytes + bytes;
  if (const int err = ::posix_fallocate(w->fd_, 0, static_cast<off_t>(map_bytes)); err != 0) {
    store_failed(dir, std::strerror(err));
    return nullptr;  // the destructor removes the file
  }
  void* base = nullptr;
  w->memory_ = filter_memory();
  if (w->memory_ == FilterMemory::private_copy) {
    base = map_private(map_bytes);        // the file is written at commit
    if (base == nullptr) return nullptr;  // out of memory: the caller's own allocation says so
  } else {
    base = ::mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd_, 0);
    if (base == MAP_FAILED) {
      store_failed(dir, std::strerror(errno));
      return nullptr;
    }
    ask_for_huge_folios(base, map_bytes);
    populate_pages(base, map_bytes);  // one kernel walk, not a fault per page (core/populate.h)
  }
  w->blob_ = std::make_shared<FilterBlob>();
  w->blob_->map_base = base;
  w->blob_->map_bytes = map_bytes;
  w->blob_->data = static_cast<const char*>(base) + kHeaderBytes;
  w->blob_->bytes = bytes;
  return w;
}

FilterEntryWriter::~FilterEntryWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

bool FilterEntryWriter::commit(const std::string& what) {
  EntryHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFilterCacheVersion;
  h.header_bytes = kHeaderBytes;
  h.key = key_;
  h.bytes = blob_->bytes;
  h.checksum = hash_bytes(blob_->data, blob_->bytes, key_);
  std::snprintf(h.what, sizeof h.what, "%s", what.c_str());
  std::memcpy(blob_->map_base, &h, sizeof h);
  // From here the layer only reads its filters.
  (void)::mprotect(blob_->map_base, blob_->map_bytes, PROT_READ);
  std::string why;
  try {
    if (memory_ == FilterMemory::private_copy)
      io::write_all(fd_, blob_->map_base, blob_->map_bytes, tmp_);
  } catch (const BackendError& e) {
    why = e.what();
  }
  ::close(fd_);
  fd_ = -1;
  if (why.empty() && ::rename(tmp_.c_str(), path_.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) {
    store_failed(dir_, why);
    ::unlink(tmp_.c_str());
    return false;
  }
  Counters& c = counters();
  c.stores++;
  c.written += blob_->bytes;
  if (memory_ == FilterMemory::private_copy)
    count_private_filter_bytes(blob_->bytes);
  else if (memory_ == FilterMemory::background)
    copy_in_background(blob_);
  return true;
}

}  // namespace meshnn::kernels

namespace meshnn {

namespace fs = std::filesystem;

std::string filter_cache_dir() {
  std::string dir;
  if (const auto v = env_value(EnvSwitch::filter_cache)) {
    if (*v != "off" && *v != "0" && *v != "none") dir = *v;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') {
    dir = std::string(x) + "/meshnn/filters";
  } else if (const char* home = std::getenv("HOME"); home && *home == '/') {
    dir = std::string(home) + "/.cache/meshnn/filters";
  }
  if (dir.empty()) return {};
  return dir + "/v" + std::to_string(kernels::kFilterCacheVersion);
}

FilterCacheStats filter_cache_stats() {
  const auto& c = kernels::counters();
  FilterCacheStats s;
  s.hits = c.hits.load();
  s.misses = c.misses.load();
  s.stores = c.stores.load();
  s.rejected = c.rejected.load();
  s.bytes_mapped = c.mapped.load();
  s.bytes_written = c.written.load();
  s.bytes_private = kernels::private_filter_bytes();
  s.copies_pending = kernels::background_copies_pending();
  return s;
}

std::vector<FilterCacheEntry> filter_cache_list(const std::string& dir) {
  std::vector<FilterCacheEntry> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    FilterCacheEntry entry;
    entry.file = e.path().filename().string();
    entry.bytes = e.file_size(ec);
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    kernels::EntryHeader h{};
    if (fd >= 0 && kernels::read_header(fd, h) && entry.bytes == kernels::kHeaderBytes + h.bytes &&
        entry.file == kernels::entry_name(h.key)) {
      entry.valid = true;
      entry.what.assign(h.what, strnlen(h.what, sizeof h.what));
    }
    if (fd >= 0) ::close(fd);
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(),
            [](const FilterCacheEntry& a, const FilterCacheEntry& b) { return a.file < b.file; });
  return out;
}

uint64_t filter_cache_clear(const std::string& dir) {
  uint64_t freed = 0;
  for (const FilterCacheEntry& e : filter_cache_list(dir)) {
    const bool ours = e.file.size() > 4 && (e.file.find(".mfc") != std::string::npos);
    if (!ours) continue;  // never delete what the cache did not write
    std::error_code ec;
    if (fs::remove(fs::path(dir) / e.file, ec)) freed += e.bytes;
  }
  return freed;
}

}  // namespace meshnn
