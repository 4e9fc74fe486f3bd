// The Winograd filter transform, run once per layer at load: u = G·w per input channel in float64,
// rounded once to f32; and the load-time memory of the Winograd kernels (the transformed filters'
// buffers, the per-thread block scratch grown when a layer is built). Kept apart from the run-time
// kernels because their cost is load time; the transform's contract is bit-equality across ISA
// forms (scalar, AVX2, AVX-512F).
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "core/populate.h"
#include "kernels/filter_cache.h"
#include "kernels/winograd1d.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/profile.h"

namespace meshnn::kernels {

namespace {
// One row of the filter transform, u[o] = Σ_j g[j]·w[j][o] for o in [o0, C_out), summed in float64
// and rounded once: w = the taps of one segment of one input channel as [tap][o] rows (nj ≤ r of
// them), g = one transform point's row of G.
struct TransformRow {
  const double* g;
  int nj;
  const float* w;
  int64_t c_out;
  float* u;
};

// Scalar lanes o0 … C_out − 1. std::fma: the same rounding as the vector paths' fmadd.
void transform_row(const TransformRow& t, int64_t o0) {
  for (int64_t o = o0; o < t.c_out; ++o) {
    double acc = 0.0;
    for (int j = 0; j < t.nj; ++j)
      acc = std::fma(t.g[j], static_cast<double>(t.w[j * t.c_out + o]), acc);
    t.u[o] = static_cast<float>(acc);
  }
}

// Lanes o0 … (C_out / 4)·4 − 1, four doubles at a time; returns where it stopped.
__attribute__((target("avx2,fma"))) int64_t transform_row_avx2(const TransformRow& t, int64_t o0) {
  const int64_t vec_end = t.c_out / 4 * 4;
  for (int64_t o = o0; o < vec_end; o += 4) {
    __m256d acc = _mm256_setzero_pd();
    for (int j = 0; j < t.nj; ++j)
      acc = _mm256_fmadd_pd(_mm256_set1_pd(t.g[j]),
                            _mm256_cvtps_pd(_mm_loadu_ps(t.w + j * t.c_out + o)), acc);
    _mm_storeu_ps(t.u + o, _mm256_cvtpd_ps(acc));
  }
  return std::max(o0, vec_end);
}

// Lanes 0 … (C_out / 8)·8 − 1, eight doubles at a time (the AVX2 form's operations per lane).
__attribute__((target("avx512f"))) int64_t transform_row_avx512(const TransformRow& t) {
  const int64_t vec_end = t.c_out / 8 * 8;
  for (int64_t o = 0; o < vec_end; o += 8) {
    __m512d acc = _mm512_setzero_pd();
    for (int j = 0; j < t.nj; ++j)
      acc =
          _mm512_fmadd_pd(_mm512_set1_pd(t.g[j]),
                          _mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(t.w + j * t.c_out + o)), acc);
    // (maskz forms: GCC 12 warns that the plain ones read an uninitialised register)
    _mm256_storeu_ps(t.u + o, _mm512_maskz_cvtpd_ps(0xff, acc));
  }
  return vec_end;
}

}  // namespace

void transform_filters(const double* g, int alpha, int r, int64_t k, int64_t segs,
                       const float* weights, int64_t c_out, int64_t c_in, float* u,
                       TransformIsa isa) {
  const CpuFeatures& f = cpu_features();
  const bool avx2 = isa != TransformIsa::scalar && winograd1d_available();
  const bool avx512 = isa == TransformIsa::best && avx2 && f.avx512f;
  // A block of input channels at a time: the gather reads kBlock·K contiguous floats per output
  // channel rather than K floats C_in·K apart (measured: the strided gather dominated the load).
  constexpr int64_t kBlock = 16;
  const int64_t ustride = c_in * c_out;  // between the (ξ, s) matrices of u
#pragma omp parallel
  {
    std::vector<float> wc(static_cast<size_t>(kBlock * k * c_out));
#pragma omp for schedule(static)
    for (int64_t c0 = 0; c0 < c_in; c0 += kBlock) {
      const int64_t nb = std::min(kBlock, c_in - c0);
      // wc[i][o] = w[o][c0·K + i] (i = cc·K + tap), 64 output channels at a time so both the
      // reads (64 rows of kBlock·K floats) and the writes (64 floats per i) stay in cache.
      for (int64_t o0 = 0; o0 < c_out; o0 += 64) {
        const int64_t o1 = std::min(c_out, o0 + 64);
        for (int64_t i = 0; i < nb * k; ++i)
          for (int64_t o = o0; o < o1; ++o) wc[i * c_out + o] = weights[(o * c_in + c0) * k + i];
      }
      // Per (ξ, s) the block's nb channels are nb·C_out contiguous values of u, written in order
      // (one store stream at a time rather than the α·S rows of one channel, C_in·C_out apart).
      // What the stores cost is mostly the first write to each fresh page of u (docs/benchmarks.md
      // "Issue 34 (wave 16)"), not this order.
      for (int xi = 0; xi < alpha; ++xi)
        for (int64_t s = 0; s < segs; ++s)
          for (int64_t cc = 0; cc < nb; ++cc) {
            const TransformRow t{g + xi * r, static_cast<int>(std::min<int64_t>(r, k - s * r)),
                                 wc.data() + (cc * k + s * r) * c_out, c_out,
                                 u + (xi * segs + s) * ustride + (c0 + cc) * c_out};
            int64_t o = avx512 ? transform_row_avx512(t) : 0;
            if (avx2) o = transform_row_avx2(t, o);
            transform_row(t, o);
          }
    }
  }
}

// ---- load-time memory of the Winograd kernels ----------------------------------------------

void reserve_winograd_scratch(size_t f32, size_t bf16) {
  // Values, not bytes; resize zero-fills, which touches the pages here, at load. Most layers need
  // no more than an earlier one: skip the parallel region (a wake-up of every thread per layer)
  // when this thread's team, as large as now, was already grown that far (libgomp keeps a
  // thread's team). Only the first call's speed depends on it: run() grows a short scratch.
  thread_local size_t have_f32 = 0, have_bf16 = 0;
  thread_local int have_threads = 0;
  const int threads = omp_get_max_threads();
  if (f32 <= have_f32 && bf16 <= have_bf16 && threads <= have_threads) return;
#pragma omp parallel
  {
    WinogradScratch& s = winograd_scratch();
    if (s.f32.size() < f32) s.f32.resize(f32);
    if (s.bf16.size() < bf16) s.bf16.resize(bf16);
  }
  const bool same_team = threads == have_threads;  // else: only this call's sizes are known
  have_f32 = same_team ? std::max(have_f32, f32) : f32;
  have_bf16 = same_team ? std::max(have_bf16, bf16) : bf16;
  have_threads = threads;
}

WeightBuffer::WeightBuffer(size_t n) : n_(n) {
  // Page-aligned. Transparent huge pages (MADV_HUGEPAGE) were measured too: no faster to load
  // here (~1.6-1.8 s per GiB as 4 KiB pages, unless the memory was freed moments before;
  // docs/benchmarks.md "Issue 34 (wave 16)") and no faster to run.
  constexpr size_t kPage = 4096;
  const size_t bytes = std::max<size_t>(kPage, (n * sizeof(float) + kPage - 1) / kPage * kPage);
  void* p = std::aligned_alloc(kPage, bytes);
  if (p == nullptr) throw std::bad_alloc();
  populate_pages(p, bytes);  // one kernel walk, not a trap per page (core/populate.h)
  owner_ = std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
  p_ = static_cast<const float*>(p);
}

WinogradFilters winograd_filters(int points, int64_t kd, int64_t c_out, WinogradPrecision precision,
                                 bool packed, const std::function<void(float*)>& transform,
                                 const std::function<uint64_t()>& key,
                                 const std::function<std::string()>& what) {
  WinogradFilters f;
  const size_t n_u = static_cast<size_t>(points * kd * c_out);
  const size_t point_bytes = PackedMatrix::packed_bytes(kd, c_out, GemmType::bf16);
  // The entry's parts: the packed matrices one per point, or U whole.
  const std::vector<size_t> sizes =
      packed ? std::vector<size_t>(static_cast<size_t>(points), point_bytes)
             : std::vector<size_t>{n_u * sizeof(float)};
  const size_t total = filter_part_offset(sizes, sizes.size() - 1) + sizes.back();
  const bool cached = total >= filter_cache_min_bytes() && !filter_cache_dir().empty();
  uint64_t k = 0;
  if (cached) {
    ProfileScope prof("load.filter_cache_find");
    {
      ProfileScope prof_key("load.filter_cache_key");
      k = key();
    }
    if (auto blob = filter_cache_find(k, total)) {
      const char* base = static_cast<const char*>(blob->data);
      if (packed)
        for (size_t xi = 0; xi < sizes.size(); ++xi)
          f.pk.push_back(PackedMatrix::packed_at(blob, base + filter_part_offset(sizes, xi), kd,
                                                 c_out, GemmType::bf16));
      else
        f.u = WeightBuffer(blob, reinterpret_cast<const float*>(base), n_u);
      f.from_cache = true;
      return f;
    }
  }
  // A miss with the cache on: the filters are made in the new entry's file mapping and the layer
  // runs from it (FilterEntryWriter), else in memory.
  std::unique_ptr<FilterEntryWriter> entry;
  if (cached) entry = FilterEntryWriter::create(k, total);
  char* entry_data = entry ? static_cast<char*>(entry->data()) : nullptr;
  // The packed path keeps only the packed matrices: U goes to a block of the tensor storage cache
  // (pages already faulted in, handed on to the next layer of that size and to the first call's
  // activations) until packed.
  Tensor u_block;
  float* u = nullptr;
  if (packed) {
    u_block = Tensor::empty({static_cast<int64_t>(n_u)});
    u = u_block.data<float>();
  } else if (entry) {
    u = reinterpret_cast<float*>(entry_data);
    f.u = WeightBuffer(entry->blob(), u, n_u);
  } else {
    f.u = WeightBuffer(n_u);
    u = f.u.data();
  }
  {
    ProfileScope prof("load.winograd_transform");
    transform(u);
  }
  if (precision == WinogradPrecision::bf16 && !packed)
    round_to_bf16_inplace(u, static_cast<int64_t>(n_u));
  if (packed) {
    ProfileScope prof("load.winograd_pack");
    f.pk.reserve(static_cast<size_t>(points));
    for (int xi = 0; xi < points; ++xi) {
      const float* b = u + xi * kd * c_out;
      if (entry)
        f.pk.push_back(PackedMatrix::pack_into(entry_data + filter_part_offset(sizes, xi),
                                               entry->blob(), b, kd, c_out, c_out, GemmType::bf16));
      else
        f.pk.emplace_back(b, kd, c_out, c_out, GemmType::bf16);
    }
  }
  if (entry) {
    ProfileScope prof("load.filter_cache_store");
    entry->commit(what());
  }
  return f;
}

}  // namespace meshnn::kernels
