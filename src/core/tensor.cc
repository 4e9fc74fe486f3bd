#include "meshnn/core/tensor.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/enum_names.h"
#include "core/env.h"
#include "core/populate.h"
#include "meshnn/core/memory.h"

namespace meshnn {

size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::f32:
      return 4;
    case DType::bf16:
      return 2;
    case DType::f16:
      return 2;
    case DType::f64:
      return 8;
    case DType::i64:
      return 8;
    case DType::i32:
      return 4;
    case DType::u8:
      return 1;
    case DType::boolean:
      return 1;
  }
  return 0;
}

namespace {
constexpr EnumNames<DType, 8> kDTypeNames{"dtype",
                                          {{DType::f32, "f32"},
                                           {DType::bf16, "bf16"},
                                           {DType::f16, "f16"},
                                           {DType::f64, "f64"},
                                           {DType::i64, "i64"},
                                           {DType::i32, "i32"},
                                           {DType::u8, "u8"},
                                           {DType::boolean, "bool"}}};
}  // namespace

const char* dtype_name(DType dt) { return kDTypeNames.name(dt); }

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  if (s.size() == 1) os << ',';
  os << ')';
  return os.str();
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

namespace {
void check_shape(const Shape& shape) {
  MESHNN_CHECK_AS(ShapeError, static_cast<int>(shape.size()) <= kMaxRank, "tensor rank ",
                  shape.size(), " exceeds the maximum ", kMaxRank);
  for (int64_t d : shape)
    MESHNN_CHECK_AS(ShapeError, d >= 0, "negative dimension in shape ", shape_str(shape));
}

// Storage cache. Writing to fresh pages costs 8–16 µs per 4 KiB page on these machines, and glibc
// returns large blocks to the kernel on free, so a model that allocates its activations per layer
// would fault every page again on every call (PyTorch's ~1 M faults per 4 s BigVGAN run). Freed
// blocks of ≥ 64 KiB are kept in size buckets (1/8-octave steps, so ≤ 12.5 % slack) and handed out
// again (to a request of the same bucket, or of up to 4× less when that bucket has none free);
// after the first forward a model's working set is reused instead of re-faulted.
// MESHNN_ALLOC_CACHE_MB caps the cached bytes (default 8192, 0 disables). Off under ASan so that
// use-after-free is still caught.
class BlockCache {
 public:
  using Clock = std::chrono::steady_clock;
  static BlockCache& get() {
    static BlockCache* c = new BlockCache();  // never destroyed: blocks may be freed at exit
    return *c;
  }
  // Bucket size for a request: small blocks exact (64-byte multiple), big ones rounded up.
  static size_t bucket(size_t bytes) {
    const size_t a =
        (std::max<size_t>(bytes, 1) + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    if (a < kMinCached) return a;
    size_t p2 = size_t{1} << (63 - __builtin_clzll(a));
    const size_t step = p2 / 8;
    return (a + step - 1) / step * step;
  }
  // A block for a request of `size` bytes (a bucket size): a cached one of that size, else the
  // smallest cached one of up to kMaxReuse × size, else a fresh one. `size` is set to the block's
  // own size, which the caller gives it back under.
  void* take(size_t& size) {
    if (size >= kMinCached && cap_ > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it == free_.end() || it->second.empty()) it = larger_locked(size);
      if (it != free_.end()) {
        void* p = it->second.back().p;  // the most recently freed: its pages are the warmest
        it->second.pop_back();
        size = it->first;
        cached_ -= size;
        --blocks_;
        return p;
      }
    }
    return populate(std::aligned_alloc(kTensorAlignment, size), size);
  }
  void give(void* p, size_t size) {
    if (size >= kMinCached && cap_ > 0) {
      std::vector<void*> old;
      {
        std::lock_guard<std::mutex> lock(mu_);
        const auto now = Clock::now();
        if (max_age_ > 0 && now - last_sweep_ >= std::chrono::duration<double>(max_age_ / 4))
          sweep_locked(now, &old);
        if (cached_ + size <= cap_) {
          free_[size].push_back({p, now});
          cached_ += size;
          ++blocks_;
          p = nullptr;
        }
      }
      if (p) std::free(p);
      if (!old.empty()) release(old);
      return;
    }
    std::free(p);
  }
  void set_max_age(double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    max_age_ = seconds;
  }
  // Frees the blocks older than the maximum age; returns the bytes.
  size_t trim() {
    std::vector<void*> old;
    size_t bytes = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const size_t before = cached_;
      if (max_age_ > 0) sweep_locked(Clock::now(), &old);
      bytes = before - cached_;
    }
    release(old);
    return bytes;
  }
  AllocationCacheStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    AllocationCacheStats s;
    s.cached_bytes = cached_;
    s.cached_blocks = blocks_;
    s.limit_bytes = cap_;
    s.max_age_seconds = max_age_;
    s.evicted_bytes = evicted_;
    return s;
  }

 private:
  struct Block {
    void* p;
    Clock::time_point freed;
  };

  BlockCache() {
#if defined(__SANITIZE_ADDRESS__)
    cap_ = 0;
#else
    const auto v = env_value(EnvSwitch::alloc_cache_mb);
    cap_ = static_cast<size_t>(v ? std::atoll(v->c_str()) : 8192) << 20;
#endif
  }
  // The smallest bucket above `size` and at most kMaxReuse × size with a free block, or end().
  // Why: a cached block's pages are resident already, so handing it to a smaller request costs no
  // memory, where a fresh block adds its own pages; without it a model whose activations shrink
  // stage by stage (an encoder: 164 → 82 → 41 MB blocks) keeps every size it ever used resident
  // at once. The bound keeps a small tensor from pinning a block a later large request needs.
  // The buckets are ordered by size, so the search starts at the first one above `size` and
  // stops at the bound (a few buckets at 1/8-octave steps) instead of scanning every bucket.
  std::map<size_t, std::deque<Block>>::iterator larger_locked(size_t size) {
    for (auto it = free_.upper_bound(size); it != free_.end() && it->first / kMaxReuse <= size;
         ++it)
      if (!it->second.empty()) return it;
    return free_.end();
  }
  // Moves the blocks freed before now − max age into `out` (each bucket is oldest first).
  void sweep_locked(Clock::time_point now, std::vector<void*>* out) {
    last_sweep_ = now;
    const auto cutoff =
        now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_age_));
    const size_t before = cached_;
    for (auto it = free_.begin(); it != free_.end();) {
      auto& blocks = it->second;
      size_t n = 0;
      for (; !blocks.empty() && blocks.front().freed < cutoff; ++n) {
        out->push_back(blocks.front().p);
        blocks.pop_front();
      }
      cached_ -= n * it->first;
      blocks_ -= n;
      it = blocks.empty() ? free_.erase(it) : std::next(it);
    }
    evicted_ += before - cached_;
  }
  // Frees blocks outside the lock, then hands the allocator's free pages back to the kernel:
  // glibc serves blocks below its (dynamic, up to 32 MiB) mmap threshold from its heaps and keeps
  // their pages after free(), so without the trim an evicted block would still count in RSS.
  static void release(const std::vector<void*>& blocks) {
    if (blocks.empty()) return;
    for (void* p : blocks) std::free(p);
#if defined(__GLIBC__)
    ::malloc_trim(0);
#endif
  }

  // A fresh big block (a first call's activations) faulted in by one madvise instead of one trap
  // per 4 KiB page on first write (core/populate.h; issue 34, first call vs steady). Blocks the
  // allocator serves from its heap are mostly resident already.
  static void* populate(void* p, size_t size) {
    populate_pages(p, size);
    return p;
  }

  static constexpr size_t kMinCached = 64 << 10;
  static constexpr size_t kMaxReuse = 4;
  std::mutex mu_;
  std::map<size_t, std::deque<Block>> free_;  // by bucket size (larger_locked)
  size_t cached_ = 0, blocks_ = 0;
  size_t cap_ = 0;
  double max_age_ = 0;
  Clock::time_point last_sweep_{};
  uint64_t evicted_ = 0;
};

std::shared_ptr<void> aligned_alloc_bytes(size_t bytes) {
  size_t size = BlockCache::bucket(bytes);
  void* p = BlockCache::get().take(size);  // size: the block's own, maybe a larger bucket
  if (!p) throw BackendError(detail::concat("out of memory allocating ", bytes, " bytes"));
  return std::shared_ptr<void>(p, [size](void* q) { BlockCache::get().give(q, size); });
}
}  // namespace

AllocationCacheStats allocation_cache_stats() { return BlockCache::get().stats(); }

void set_allocation_cache_max_age(double seconds) {
  MESHNN_CHECK(seconds >= 0 && std::isfinite(seconds),
               "allocation cache max age must be >= 0 seconds, got ", seconds);
  BlockCache::get().set_max_age(seconds);
}

size_t trim_allocation_cache() { return BlockCache::get().trim(); }

Tensor Tensor::empty(Shape shape, DType dtype) {
  check_shape(shape);
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.dtype_set_ = true;
  t.owned_ = true;
  t.keep_ = aligned_alloc_bytes(t.nbytes());
  t.data_ = t.keep_.get();
  return t;
}

Tensor::Tensor(Shape shape, DType dtype) {
  *this = empty(std::move(shape), dtype);
  fill_zero();
}

Tensor Tensor::view(void* data, Shape shape, DType dtype, std::shared_ptr<void> owner) {
  check_shape(shape);
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.dtype_set_ = true;
  t.owned_ = false;
  t.data_ = data;
  t.keep_ = std::move(owner);
  return t;
}

int Tensor::norm_dim(int d) const {
  const int r = rank();
  MESHNN_CHECK_AS(ShapeError, d >= -r && d < r, "dim ", d, " out of range for a rank-", r,
                  " tensor of shape ", shape_str(shape_));
  return d < 0 ? d + r : d;
}

int64_t Tensor::dim(int d) const { return shape_[norm_dim(d)]; }

void Tensor::check_dtype(DType expected) const {
  MESHNN_CHECK(dtype_set_, "tensor is undefined (expected ", dtype_name(expected), ")");
  MESHNN_CHECK(dtype_ == expected, "tensor of dtype ", dtype_name(dtype_), " and shape ",
               shape_str(shape_), " accessed as ", dtype_name(expected));
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  check_shape(shape);
  MESHNN_CHECK_AS(ShapeError, shape_numel(shape) == numel(), "cannot reshape ", shape_str(shape_),
                  " to ", shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::narrow(int d, int64_t start, int64_t len) const {
  d = norm_dim(d);
  MESHNN_CHECK_AS(ShapeError, start >= 0 && len >= 0 && start + len <= shape_[d], "narrow [", start,
                  ", ", start + len, ") out of range for dim ", d, " of ", shape_str(shape_));
  Shape out_shape = shape_;
  out_shape[d] = len;
  Tensor out = empty(out_shape, dtype_);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= shape_[i];
  for (int i = d + 1; i < rank(); ++i) inner *= shape_[i];
  const size_t es = dtype_size(dtype_);
  const size_t row = static_cast<size_t>(inner) * es;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<char*>(out.data_) + o * len * row,
                static_cast<const char*>(data_) + (o * shape_[d] + start) * row, len * row);
  return out;
}

void Tensor::fill_zero() {
  if (nbytes()) std::memset(data_, 0, nbytes());
}

namespace {
double load_as_f64(const void* p, DType dt, int64_t i) {
  switch (dt) {
    case DType::f32:
      return static_cast<const float*>(p)[i];
    case DType::bf16:
      return to_f32(static_cast<const bf16*>(p)[i]);
    case DType::f64:
      return static_cast<const double*>(p)[i];
    case DType::i64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::i32:
      return static_cast<const int32_t*>(p)[i];
    case DType::u8:
      return static_cast<const uint8_t*>(p)[i];
    case DType::boolean:
      return static_cast<const uint8_t*>(p)[i] != 0;
    case DType::f16: {
      // IEEE half → double (used only for reading F16 checkpoints).
      const uint16_t h = static_cast<const uint16_t*>(p)[i];
      const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
      double v;
      if (exp == 0)
        v = man * 0x1p-24;
      else if (exp == 31)
        v = man ? std::numeric_limits<double>::quiet_NaN()
                : std::numeric_limits<double>::infinity();
      else
        v = (1.0 + man * 0x1p-10) * std::ldexp(1.0, exp - 15);
      return sign ? -v : v;
    }
  }
  return 0;
}
}  // namespace

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return clone();
  Tensor out = empty(shape_, dtype);
  const int64_t n = numel();
  if (dtype_ == DType::f32 && dtype == DType::bf16) {
    const float* s = static_cast<const float*>(data_);
    bf16* d = static_cast<bf16*>(out.data_);
    for (int64_t i = 0; i < n; ++i) d[i] = to_bf16(s[i]);
    return out;
  }
  if (dtype_ == DType::bf16 && dtype == DType::f32) {
    // Every checkpoint load takes this path (bf16 files, f32 layers): a bit shift per value, not
    // the generic per-element switch through double (same values: bf16 → f32 is exact).
    // Parallel for large tensors: most of the cost is first-touch page faults on the output.
    const bf16* s = static_cast<const bf16*>(data_);
    float* d = static_cast<float*>(out.data_);
#pragma omp parallel for schedule(static) if (n > (1 << 18))
    for (int64_t i = 0; i < n; ++i) d[i] = to_f32(s[i]);
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double v = load_as_f64(data_, dtype_, i);
    switch (dtype) {
      case DType::f32:
        static_cast<float*>(out.data_)[i] = static_cast<float>(v);
        break;
      case DType::bf16:
        static_cast<bf16*>(out.data_)[i] = to_bf16(static_cast<float>(v));
        break;
      case DType::f64:
        static_cast<double*>(out.data_)[i] = v;
        break;
      case DType::i64:
        static_cast<int64_t*>(out.data_)[i] = static_cast<int64_t>(v);
        break;
      case DType::i32:
        static_cast<int32_t*>(out.data_)[i] = static_cast<int32_t>(v);
        break;
      case DType::u8:
        static_cast<uint8_t*>(out.data_)[i] = static_cast<uint8_t>(v);
        break;
      case DType::boolean:
        static_cast<uint8_t*>(out.data_)[i] = v != 0;
        break;
      case DType::f16:
        throw Unsupported(
            detail::concat("conversion to f16 is not supported (from ", dtype_name(dtype_), ")"));
    }
  }
  return out;
}

Tensor concat(const std::vector<Tensor>& parts, int d) {
  MESHNN_CHECK(!parts.empty(), "concat of no tensors");
  const Tensor& first = parts[0];
  d = first.norm_dim(d);
  Shape out_shape = first.shape();
  out_shape[d] = 0;
  for (const Tensor& p : parts) {
    MESHNN_CHECK_AS(ShapeError, p.dtype() == first.dtype() && p.rank() == first.rank(),
                    "concat: part ", shape_str(p.shape()), " ", dtype_name(p.dtype()),
                    " does not match ", shape_str(first.shape()), " ", dtype_name(first.dtype()));
    for (int i = 0; i < p.rank(); ++i)
      MESHNN_CHECK_AS(ShapeError, i == d || p.shape()[i] == first.shape()[i], "concat along dim ",
                      d, ": part ", shape_str(p.shape()), " vs ", shape_str(first.shape()));
    out_shape[d] += p.shape()[d];
  }
  Tensor out = Tensor::empty(out_shape, first.dtype());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= out_shape[i];
  for (int i = d + 1; i < first.rank(); ++i) inner *= out_shape[i];
  const size_t es = dtype_size(first.dtype());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor& p : parts) {
      const size_t bytes = static_cast<size_t>(p.shape()[d] * inner) * es;
      std::memcpy(dst, static_cast<const char*>(p.raw()) + o * bytes, bytes);
      dst += bytes;
    }
  return out;
}

}  // namespace meshnn
