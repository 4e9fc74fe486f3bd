#include "core/populate.h"

#include <sys/mman.h>

#include <cstdint>

namespace meshnn {

void populate_pages(void* p, size_t bytes) {
#if defined(MADV_POPULATE_WRITE) && !defined(__SANITIZE_ADDRESS__)
  constexpr uintptr_t kPage = 4096;
  constexpr size_t kMin = size_t{1} << 20;
  if (p == nullptr || bytes < kMin) return;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (e > a) (void)::madvise(reinterpret_cast<void*>(a), e - a, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

void populate_pages_for_reading(const void* p, size_t bytes) {
#if defined(MADV_POPULATE_READ)
  constexpr uintptr_t kPage = 4096;
  const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  if (p != nullptr && e > a) (void)::madvise(reinterpret_cast<void*>(a), e - a, MADV_POPULATE_READ);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace meshnn
