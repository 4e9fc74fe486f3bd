// Where cached filters live (kernels/filter_memory.h): the MESHNN_FILTER_MEMORY switch, private
// copies made at load, and the background copier that moves entries into private memory in place.
#include "kernels/filter_memory.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "core/enum_names.h"
#include "core/env.h"
#include "core/populate.h"

namespace meshnn::kernels {

namespace {

constexpr EnumNames<FilterMemory, 3> kMemoryNames{"filter memory",
                                                  {{FilterMemory::mapped, "mapped"},
                                                   {FilterMemory::private_copy, "private"},
                                                   {FilterMemory::background, "background"}}};

std::atomic<uint64_t> g_private_bytes{0};

// ---- background copies (FilterMemory::background) ----------------------------------------------

// Puts an anonymous copy of a blob's mapping in place of the mapping itself, at the same address:
// the copy is made aside, made read-only, then moved over the file's pages by one mremap, which
// replaces the page-table entries under the address-space lock. A reader on another thread reads
// the same bytes before and after; nothing that holds `data` sees it move. False (the file's pages
// stay) when memory cannot be had.
bool swap_in_private(const FilterBlob& b) {
  // On this thread only: the copy runs beside the calls, at low priority.
  void* own = map_private(b.map_bytes, b.map_base, /*all_threads=*/false);
  if (own == nullptr) return false;
  (void)::mprotect(own, b.map_bytes, PROT_READ);
  if (::mremap(own, b.map_bytes, b.map_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, b.map_base) ==
      MAP_FAILED) {
    ::munmap(own, b.map_bytes);
    return false;
  }
  // One read per page, here rather than in the next call: on this project's VMs the first access
  // to each moved page costs ~1.5 µs (the hypervisor's shadow page tables learn the new entries) —
  // without it the first LTX-2.3 decode after the copies ran 2.1 s instead of 1.6 s.
  const auto* page = static_cast<const volatile unsigned char*>(b.map_base);
  unsigned char sink = 0;
  for (size_t at = 0; at < b.map_bytes; at += 4096) sink ^= page[at];
  (void)sink;
  return true;
}

// One low-priority thread that swaps queued entries into private memory, oldest first. It holds
// a weak reference: an entry whose layers are gone before its turn is skipped, and one being
// copied stays mapped until its swap is done (the copier then holds the last reference).
class BackgroundCopier {
 public:
  // Never destroyed: the thread may still run while the process's statics are torn down.
  static BackgroundCopier& get() {
    static auto* c = new BackgroundCopier();
    return *c;
  }
  void enqueue(std::weak_ptr<const FilterBlob> blob) {
    std::lock_guard<std::mutex> lk(m_);
    queue_.push_back(std::move(blob));
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
    work_.notify_one();
  }
  uint64_t pending() {
    std::lock_guard<std::mutex> lk(m_);
    return queue_.size() + (busy_ ? 1 : 0);
  }
  bool settle(double timeout_seconds) {
    std::unique_lock<std::mutex> lk(m_);
    return idle_.wait_for(lk, std::chrono::duration<double>(timeout_seconds),
                          [this] { return queue_.empty() && !busy_; });
  }

 private:
  void run() {
    // Nice 10 (this thread only): about a tenth of a core while calls keep both cores busy,
    // so the copies neither stall them nor starve (SCHED_IDLE starved: 1 of 169 LTX-2.3 entries
    // copied over 8 back-to-back decodes), and a whole core when they leave it idle.
    (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      work_.wait(lk, [this] { return !queue_.empty(); });
      std::weak_ptr<const FilterBlob> next = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lk.unlock();
      if (std::shared_ptr<const FilterBlob> blob = next.lock()) {
        if (swap_in_private(*blob)) count_private_filter_bytes(blob->bytes);
      }  // the last reference may go here: the entry is unmapped outside the lock
      lk.lock();
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable work_, idle_;
  std::deque<std::weak_ptr<const FilterBlob>> queue_;
  bool busy_ = false, started_ = false;
};

}  // namespace

FilterMemory filter_memory() {
  return env_choice(EnvSwitch::filter_memory, kMemoryNames).value_or(FilterMemory::mapped);
}

// Anonymous memory for an entry's bytes (FilterMemory::private_copy), holding a copy of `from`
// when given; nullptr when it cannot be had. Faulted in and filled in 4 MiB chunks spread over the
// threads (or on the caller's only): a warm LTX-2.3 load (1.3 GB of filters) took 1.9-2.1 s so on
// 2 threads, 2.5-2.8 s on one (the first write of each fresh page dominates; docs/benchmarks.md
// "Issue 34 (wave 21)").
void* map_private(size_t bytes, const void* from, bool all_threads) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  constexpr size_t kChunk = size_t{4} << 20;
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  char* to = static_cast<char*>(p);
#pragma omp parallel for schedule(static) if (all_threads)
  for (int64_t i = 0; i < chunks; ++i) {
    const size_t at = static_cast<size_t>(i) * kChunk, n = std::min(kChunk, bytes - at);
    populate_pages(to + at, n);
    if (from) std::memcpy(to + at, static_cast<const char*>(from) + at, n);
  }
  return p;
}

void copy_in_background(std::weak_ptr<const FilterBlob> blob) {
  BackgroundCopier::get().enqueue(std::move(blob));
}
uint64_t background_copies_pending() { return BackgroundCopier::get().pending(); }

void count_private_filter_bytes(uint64_t bytes) { g_private_bytes += bytes; }
uint64_t private_filter_bytes() { return g_private_bytes.load(); }

}  // namespace meshnn::kernels

namespace meshnn {

const char* filter_cache_memory() { return kernels::kMemoryNames.name(kernels::filter_memory()); }

bool filter_cache_settle(double timeout_seconds) {
  return kernels::BackgroundCopier::get().settle(timeout_seconds);
}

}  // namespace meshnn
