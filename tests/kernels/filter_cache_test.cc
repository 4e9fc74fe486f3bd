// The transformed-filter disk cache: a layer built from a cache entry runs bit for bit like one
// that transformed its own filters (f32, bf16 emulated, packed bf16; 1-D plain, dilated and
// segmented, 2-D); changed weights are a new entry, never a stale one; a corrupted or truncated
// entry is refused, deleted and rebuilt; the cache off writes nothing; an unwritable folder only
// warns; `list` and `clear` see exactly the cache's files. Every test works in its own folder.
#include "kernels/filter_cache.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/file_util.h"
#include "kernels/filter_memory.h"
#include "kernels/packed_gemm.h"
#include "kernels/strided_gemm_conv1d.h"
#include "kernels/winograd1d.h"
#include "kernels/winograd2d.h"
#include "layers/conv_engine.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/layers/state_dict.h"
#include "support/golden.h"
#include "support/scratch_dir.h"

namespace meshnn::kernels {
namespace {

namespace fs = std::filesystem;

std::vector<float> normal(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.f, 0.05f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Sets an environment variable for one scope, restoring it after.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> saved;
  ScopedEnv(const char* n, const std::string& value) : name(n) {
    if (const char* v = std::getenv(n)) saved = v;
    setenv(n, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (saved)
      setenv(name.c_str(), saved->c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

// The cache on, in a fresh folder, for one scope.
struct CacheFolder {
  test::ScratchDir scratch;
  ScopedEnv env{"MESHNN_FILTER_CACHE", scratch.dir.string()};
  std::string dir() const { return filter_cache_dir(); }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    if (!fs::exists(dir())) return out;
    for (const auto& e : fs::directory_iterator(dir())) out.push_back(e.path());
    return out;
  }
};

// The cache off for one scope.
struct CacheOff : ScopedEnv {
  CacheOff() : ScopedEnv("MESHNN_FILTER_CACHE", "off") {}
};

struct Conv1d {
  int64_t co, ci, k, d;
  WinogradTile tile;
};

// y (T_out, C_out) of a fresh Winograd1d built from w, and whether its filters came from the cache.
std::vector<float> run1d(const Conv1d& c, const std::vector<float>& w, WinogradPrecision p,
                         WinogradIsa isa, uint64_t seed) {
  const std::vector<float> bias = normal(static_cast<size_t>(c.co), seed + 7);
  Winograd1d layer(w.data(), bias.data(), c.co, c.ci, c.k, c.d, c.tile, p, isa);
  const int64_t T = 37, pad = (c.k - 1) * c.d / 2, T_out = T;
  const std::vector<float> x = normal(static_cast<size_t>(T * c.ci), seed + 8);
  std::vector<float> y(static_cast<size_t>(T_out * c.co));
  layer.run(x.data(), T, pad, y.data(), T_out, false);
  return y;
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(FilterCache, HashIsStableAcrossThreadCountsAndSeesOneBit) {
  std::vector<float> v = normal((size_t{9} << 20) / sizeof(float) + 3, 1);  // 3 chunks, a tail
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const uint64_t one = hash_bytes(v.data(), v.size() * 4);
  omp_set_num_threads(std::max(2, threads));
  const uint64_t two = hash_bytes(v.data(), v.size() * 4);
  omp_set_num_threads(threads);
  EXPECT_EQ(one, two);
  uint32_t bits;
  std::memcpy(&bits, &v[v.size() / 2], 4);
  bits ^= 1u;  // the lowest mantissa bit of one value
  std::memcpy(&v[v.size() / 2], &bits, 4);
  EXPECT_NE(hash_bytes(v.data(), v.size() * 4), one);
  EXPECT_NE(hash_bytes(v.data(), 5, 0), hash_bytes(v.data(), 5, 1));
  EXPECT_NE(hash_bytes(v.data(), 5), hash_bytes(v.data(), 6));
}

// Each precision and geometry: the first build stores an entry, the second maps it, both run the
// same bits as a layer built with the cache off.
TEST(FilterCache, MappedFiltersRunBitForBitLikeTransformedOnes) {
  struct Form {
    Conv1d c;
    WinogradPrecision p;
    WinogradIsa isa;
  };
  std::vector<Form> forms = {
      {{256, 256, 3, 1, {4, 3}}, WinogradPrecision::f32, WinogradIsa::automatic},
      {{256, 192, 7, 3, {4, 7}}, WinogradPrecision::f32, WinogradIsa::automatic},
      {{320, 256, 11, 5, {4, 4}}, WinogradPrecision::f32, WinogradIsa::automatic},  // segmented
      {{256, 256, 3, 1, {4, 3}}, WinogradPrecision::bf16, WinogradIsa::avx2},       // emulated
  };
  if (packed_gemm_available(GemmType::bf16))
    forms.push_back({{256, 256, 7, 3, {4, 7}}, WinogradPrecision::bf16, WinogradIsa::automatic});
  else
    std::printf("(this CPU has no AVX512-BF16: the packed bf16 form is not run here)\n");
  uint64_t seed = 100;
  for (const Form& f : forms) {
    SCOPED_TRACE(::testing::Message() << "C_out " << f.c.co << " K " << f.c.k << " d " << f.c.d);
    const std::vector<float> w = normal(static_cast<size_t>(f.c.co * f.c.ci * f.c.k), seed);
    const std::vector<float> reference = [&] {
      CacheOff off;
      return run1d(f.c, w, f.p, f.isa, seed);
    }();
    CacheFolder cache;
    const FilterCacheStats s0 = filter_cache_stats();
    const std::vector<float> stored = run1d(f.c, w, f.p, f.isa, seed);
    const FilterCacheStats s1 = filter_cache_stats();
    EXPECT_EQ(s1.stores, s0.stores + 1);
    EXPECT_EQ(s1.hits, s0.hits);
    ASSERT_EQ(cache.entries().size(), 1u);
    const std::vector<float> mapped = run1d(f.c, w, f.p, f.isa, seed);
    const FilterCacheStats s2 = filter_cache_stats();
    EXPECT_EQ(s2.hits, s1.hits + 1);
    EXPECT_EQ(s2.stores, s1.stores);
    expect_same_bits(stored, reference);
    expect_same_bits(mapped, reference);
    seed += 10;
  }
}

TEST(FilterCache, Winograd2dFromTheCacheRunsTheSameBits) {
  const int64_t ci = 128, co = 128, H = 9, W = 21;  // U = 16·128·128 f32 = 1 MiB
  const std::vector<float> w = normal(static_cast<size_t>(co * ci * 9), 5);
  const std::vector<float> b = normal(static_cast<size_t>(co), 6);
  const std::vector<float> x = normal(static_cast<size_t>(H * W * ci), 7);
  auto run = [&] {
    Winograd2d layer(w.data(), b.data(), co, ci);
    std::vector<float> y(static_cast<size_t>(H * W * co));
    layer.run(x.data(), H, W, 1, 1, y.data(), H, W, false);
    return y;
  };
  const std::vector<float> reference = [&] {
    CacheOff off;
    return run();
  }();
  CacheFolder cache;
  const uint64_t hits = filter_cache_stats().hits;
  expect_same_bits(run(), reference);
  expect_same_bits(run(), reference);
  EXPECT_EQ(filter_cache_stats().hits, hits + 1);
  ASSERT_EQ(cache.entries().size(), 1u);
}

TEST(FilterCache, ChangedWeightsAreANewEntryNeverAStaleOne) {
  CacheFolder cache;
  const Conv1d c{256, 256, 3, 1, {4, 3}};
  std::vector<float> w = normal(static_cast<size_t>(c.co * c.ci * c.k), 21);
  run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 21);
  w[12345] = std::nextafter(w[12345], 1.f);  // one value, one ulp
  const uint64_t hits = filter_cache_stats().hits;
  const std::vector<float> got = run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 21);
  EXPECT_EQ(filter_cache_stats().hits, hits);
  EXPECT_EQ(cache.entries().size(), 2u);
  CacheOff off;
  expect_same_bits(got, run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 21));
}

// A damaged entry (one flipped byte of its contents; cut short) is refused, deleted with a warning
// and rebuilt whole; the layer's output is unaffected.
TEST(FilterCache, DamagedEntriesAreRefusedAndRebuilt) {
  const Conv1d c{256, 256, 3, 1, {4, 3}};
  const std::vector<float> w = normal(static_cast<size_t>(c.co * c.ci * c.k), 31);
  const std::vector<float> reference = [&] {
    CacheOff off;
    return run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 31);
  }();
  for (const bool truncate : {false, true}) {
    CacheFolder cache;
    run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 31);
    ASSERT_EQ(cache.entries().size(), 1u);
    const fs::path entry = cache.entries()[0];
    const auto size = fs::file_size(entry);
    if (truncate) {
      fs::resize_file(entry, size - 4096);
    } else {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(size - 1000));
      char byte = 0;
      f.read(&byte, 1);
      byte ^= 0x10;
      f.seekp(static_cast<std::streamoff>(size - 1000));
      f.write(&byte, 1);
    }
    const FilterCacheStats s0 = filter_cache_stats();
    expect_same_bits(run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 31), reference);
    const FilterCacheStats s1 = filter_cache_stats();
    EXPECT_EQ(s1.rejected, s0.rejected + 1);
    EXPECT_EQ(s1.hits, s0.hits);
    EXPECT_EQ(s1.stores, s0.stores + 1);  // rebuilt
    EXPECT_EQ(fs::file_size(entry), size);
    expect_same_bits(run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 31), reference);
    EXPECT_EQ(filter_cache_stats().hits, s1.hits + 1);
  }
}

TEST(FilterCache, OffWritesNothingAndSmallLayersAreNotCached) {
  test::ScratchDir scratch;
  {
    ScopedEnv folder("MESHNN_FILTER_CACHE", scratch.dir.string() + "/unused");
    CacheOff off;
    EXPECT_EQ(filter_cache_dir(), "");
    const Conv1d big{256, 256, 3, 1, {4, 3}};
    run1d(big, normal(static_cast<size_t>(256 * 256 * 3), 41), WinogradPrecision::f32,
          WinogradIsa::automatic, 41);
  }
  ScopedEnv folder("MESHNN_FILTER_CACHE", scratch.dir.string());
  const Conv1d small{48, 48, 3, 1, {4, 3}};  // U = 6·48·48 f32 = 54 KiB
  run1d(small, normal(static_cast<size_t>(48 * 48 * 3), 42), WinogradPrecision::f32,
        WinogradIsa::automatic, 42);
  EXPECT_TRUE(fs::is_empty(scratch.dir));
  {
    ScopedEnv min("MESHNN_FILTER_CACHE_MIN_KB", "32");  // now it is
    run1d(small, normal(static_cast<size_t>(48 * 48 * 3), 42), WinogradPrecision::f32,
          WinogradIsa::automatic, 42);
    EXPECT_FALSE(fs::is_empty(scratch.dir));
  }
  ScopedEnv bad("MESHNN_FILTER_CACHE_MIN_KB", "lots");
  EXPECT_THROW(filter_cache_min_bytes(), InvalidArgument);
}

TEST(FilterCache, AnUnwritableFolderOnlyWarns) {
  test::ScratchDir scratch;
  const std::string file = scratch.at("a_file");
  std::ofstream(file) << "not a folder";
  const Conv1d c{256, 256, 3, 1, {4, 3}};
  const std::vector<float> w = normal(static_cast<size_t>(c.co * c.ci * c.k), 51);
  std::vector<float> got;
  {
    // Under a regular file: the folder cannot be made, even as root.
    ScopedEnv folder("MESHNN_FILTER_CACHE", file + "/cache");
    got = run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 51);
  }
  CacheOff off;
  expect_same_bits(got, run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 51));
}

TEST(FilterCache, ListAndClearSeeOnlyTheCachesFiles) {
  CacheFolder cache;
  const Conv1d c{256, 256, 3, 1, {4, 3}};
  run1d(c, normal(static_cast<size_t>(256 * 256 * 3), 61), WinogradPrecision::f32,
        WinogradIsa::automatic, 61);
  std::ofstream(cache.dir() + "/notes.txt") << "someone else's file";
  const auto listed = filter_cache_list(cache.dir());
  ASSERT_EQ(listed.size(), 2u);
  const auto& entry = listed[0].file == "notes.txt" ? listed[1] : listed[0];
  EXPECT_TRUE(entry.valid);
  EXPECT_EQ(entry.what, "winograd1d F(4,3) C_in 256 C_out 256 K 3 dilation 1 f32");
  EXPECT_EQ(entry.bytes, 4096u + 6u * 256 * 256 * 4);
  EXPECT_EQ(filter_cache_clear(cache.dir()), entry.bytes);
  ASSERT_EQ(cache.entries().size(), 1u);
  EXPECT_EQ(cache.entries()[0].filename(), "notes.txt");
}

TEST(FilterCache, FolderFollowsTheEnvironment) {
  {
    CacheOff off;
    EXPECT_EQ(filter_cache_dir(), "");
  }
  const std::string v = "/v" + std::to_string(kFilterCacheVersion);
  {
    ScopedEnv folder("MESHNN_FILTER_CACHE", "/some/where");
    EXPECT_EQ(filter_cache_dir(), "/some/where" + v);
  }
  ScopedEnv unset_later("MESHNN_FILTER_CACHE", "");  // empty = unset
  ScopedEnv xdg("XDG_CACHE_HOME", "/x");
  EXPECT_EQ(filter_cache_dir(), "/x/meshnn/filters" + v);
  ScopedEnv no_xdg("XDG_CACHE_HOME", "relative");  // not absolute: ignored, as the spec says
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(filter_cache_dir(), "/home/someone/.cache/meshnn/filters" + v);
  EXPECT_EQ(filter_cache_min_bytes(), kFilterCacheMinBytes);
}

// The VmFlags line of this process's mapping that holds p ("" when none does).
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) == 3) {  // a mapping's first line
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

// A new entry and a found one are both mapped asking for huge folios (VmFlags "hg"): where the
// file system keeps 2 MiB page-cache folios, a warm load then maps the filters by PMD entries
// (4x faster to read first here; docs/benchmarks.md "Issue 34 (wave 19)").
TEST(FilterCache, EntriesAreMappedAskingForHugeFolios) {
  CacheFolder cache;
  const size_t bytes = size_t{3} << 20;
  const uint64_t key = 0x5eed0000beefULL;
  auto writer = FilterEntryWriter::create(key, bytes);
  ASSERT_NE(writer, nullptr);
  const std::vector<float> v = normal(bytes / sizeof(float), 41);
  std::memcpy(writer->data(), v.data(), bytes);
  EXPECT_NE(vm_flags_of(writer->data()).find(" hg"), std::string::npos)
      << vm_flags_of(writer->data());
  ASSERT_TRUE(writer->commit("a test entry"));
  writer.reset();
  const auto found = filter_cache_find(key, bytes);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(std::memcmp(found->data, v.data(), bytes), 0);
  EXPECT_NE(vm_flags_of(found->data).find(" hg"), std::string::npos) << vm_flags_of(found->data);
}

// The file behind this process's mapping that holds p ("" for anonymous memory or none).
std::string mapped_file_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || at < lo || at >= hi) continue;
    const size_t slash = line.find('/');
    return slash == std::string::npos ? "" : line.substr(slash);
  }
  return "";
}

// MESHNN_FILTER_MEMORY=private: a new entry is made in anonymous memory and written to its file
// at commit, a found one copied out of the page cache; either way the layer runs the same bits
// from memory no file backs, and the file is the same entry a mapped load finds.
TEST(FilterCache, PrivateMemoryHoldsTheSameEntryInNoFileMapping) {
  CacheFolder cache;
  const size_t bytes = size_t{3} << 20;
  const uint64_t key = 0x5eed0000cafeULL;
  const std::vector<float> v = normal(bytes / sizeof(float), 44);
  {
    ScopedEnv own("MESHNN_FILTER_MEMORY", "private");
    auto writer = FilterEntryWriter::create(key, bytes);
    ASSERT_NE(writer, nullptr);
    EXPECT_EQ(mapped_file_of(writer->data()), "");
    std::memcpy(writer->data(), v.data(), bytes);
    ASSERT_TRUE(writer->commit("a private test entry"));
    const auto found = filter_cache_find(key, bytes);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(mapped_file_of(found->data), "");
    EXPECT_EQ(std::memcmp(found->data, v.data(), bytes), 0);
  }
  const auto mapped = filter_cache_find(key, bytes);  // the default: the file itself
  ASSERT_NE(mapped, nullptr);
  EXPECT_NE(mapped_file_of(mapped->data).find(cache.dir()), std::string::npos);
  EXPECT_EQ(std::memcmp(mapped->data, v.data(), bytes), 0);

  // A layer: cold and warm in private memory, the same bits as transformed with the cache off.
  const Conv1d c{256, 256, 7, 3, {4, 7}};
  const std::vector<float> w = normal(static_cast<size_t>(c.co * c.ci * c.k), 45);
  const std::vector<float> reference = [&] {
    CacheOff off;
    return run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 46);
  }();
  ScopedEnv own("MESHNN_FILTER_MEMORY", "private");
  const FilterCacheStats s0 = filter_cache_stats();
  expect_same_bits(run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 46), reference);
  expect_same_bits(run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 46), reference);
  const FilterCacheStats s1 = filter_cache_stats();
  EXPECT_EQ(s1.stores, s0.stores + 1);
  EXPECT_EQ(s1.hits, s0.hits + 1);

  ScopedEnv bad("MESHNN_FILTER_MEMORY", "shared");
  EXPECT_THROW(filter_memory(), InvalidArgument);
}

// MESHNN_FILTER_MEMORY=background: an entry loads as the file's mapping, then the background
// copier puts a private copy in its place at the same address. Readers on other threads hash the
// entry over and over while that happens and always see the same bytes; after settling no file
// backs the entry, new entries (made in their files) move too, an entry dropped before its turn
// is skipped, and a layer runs the same bits as with the cache off.
TEST(FilterCache, BackgroundCopyMovesEntriesIntoPrivateMemoryInPlace) {
  CacheFolder cache;
  const size_t bytes =
      size_t{48} << 20;  // big enough that the swap lands among the readers' passes
  const uint64_t key = 0xbacc0000cafeULL;
  const std::vector<float> v = normal(bytes / sizeof(float), 61);
  const uint64_t want = hash_bytes(v.data(), bytes, 7);
  {
    auto writer = FilterEntryWriter::create(key, bytes);  // mapped: the entry file
    ASSERT_NE(writer, nullptr);
    std::memcpy(writer->data(), v.data(), bytes);
    ASSERT_TRUE(writer->commit("a background test entry"));
  }
  ScopedEnv background("MESHNN_FILTER_MEMORY", "background");
  ASSERT_TRUE(filter_cache_settle(60));
  const FilterCacheStats s0 = filter_cache_stats();
  const auto found = filter_cache_find(key, bytes);
  ASSERT_NE(found, nullptr);
  const void* at = found->data;
  // One reader hashing the entry in 1 MiB pieces, over and over, while the copier works (the
  // other core is left to the copier, which runs at idle priority).
  auto pieces_hash = [bytes](const void* p) {
    uint64_t h = 0;
    for (size_t off = 0; off < bytes; off += size_t{1} << 20)
      h = h * 31 + hash_bytes(static_cast<const char*>(p) + off,
                              std::min(size_t{1} << 20, bytes - off), off);
    return h;
  };
  const uint64_t expect = pieces_hash(v.data());
  std::atomic<bool> stop{false};
  std::atomic<int> passes{0}, wrong{0};
  std::thread reader([&] {
    while (!stop.load()) {
      if (pieces_hash(found->data) != expect) ++wrong;
      ++passes;
    }
  });
  ASSERT_TRUE(filter_cache_settle(60));
  while (passes.load() < 4) std::this_thread::yield();
  stop = true;
  reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(found->data, at);
  EXPECT_EQ(mapped_file_of(found->data), "");
  EXPECT_EQ(hash_bytes(found->data, bytes, 7), want);
  const FilterCacheStats s1 = filter_cache_stats();
  EXPECT_EQ(s1.bytes_private, s0.bytes_private + bytes);
  EXPECT_EQ(s1.copies_pending, 0u);

  // A new entry is made in its file (as mapped), then moved after commit.
  const uint64_t key2 = key + 1;
  auto writer = FilterEntryWriter::create(key2, size_t{3} << 20);
  ASSERT_NE(writer, nullptr);
  EXPECT_NE(mapped_file_of(writer->data()).find(cache.dir()), std::string::npos);
  std::memcpy(writer->data(), v.data(), size_t{3} << 20);
  ASSERT_TRUE(writer->commit("a second background test entry"));
  ASSERT_TRUE(filter_cache_settle(60));
  EXPECT_EQ(mapped_file_of(writer->data()), "");
  EXPECT_EQ(std::memcmp(writer->data(), v.data(), size_t{3} << 20), 0);

  // Entries whose layers are gone before their turn: skipped, nothing touches their addresses.
  for (int i = 0; i < 8; ++i) (void)filter_cache_find(key, bytes);
  ASSERT_TRUE(filter_cache_settle(60));

  const Conv1d c{256, 256, 7, 3, {4, 7}};
  const std::vector<float> w = normal(static_cast<size_t>(c.co * c.ci * c.k), 62);
  const std::vector<float> reference = [&] {
    CacheOff off;
    return run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 63);
  }();
  expect_same_bits(run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 63), reference);
  expect_same_bits(run1d(c, w, WinogradPrecision::f32, WinogradIsa::automatic, 63), reference);
}

// A checkpoint's mapping asks for huge folios too: where the page cache keeps the file in 2 MiB
// folios, a pass over its weights (the origin hash of a MappedWeight) reads through PMD mappings.
TEST(FilterCache, CheckpointMappingsAskForHugeFolios) {
  test::ScratchDir dir;
  const std::string path = (dir.dir / "weights.bin").string();
  const std::vector<float> v = normal((size_t{3} << 20) / sizeof(float), 43);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  const auto src = io::ByteSource::map_file(path);
  ASSERT_EQ(src->size, v.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(src->data, v.data(), src->size), 0);
  EXPECT_NE(vm_flags_of(src->data).find(" hg"), std::string::npos) << vm_flags_of(src->data);
}

// A layer found in the cache by its weights' origin never makes the weights: the maker runs on
// the miss only, the hit runs the same bits, and another origin is another entry.
TEST(FilterCache, AHitByOriginNeverMakesTheWeights) {
  CacheFolder cache;
  const Conv1d c{256, 256, 3, 1, {4, 3}};
  const std::vector<float> w = normal(static_cast<size_t>(c.co * c.ci * c.k), 51);
  const std::vector<float> bias = normal(static_cast<size_t>(c.co), 52);
  const std::vector<float> x = normal(static_cast<size_t>(37 * c.ci), 53);
  int made = 0;
  auto run = [&](uint64_t origin) {
    const FilterWeights fw(
        [&] {
          ++made;
          return w.data();
        },
        [origin] { return origin; });
    Winograd1d layer(fw, bias.data(), c.co, c.ci, c.k, c.d, c.tile);
    std::vector<float> y(static_cast<size_t>(37 * c.co));
    layer.run(x.data(), 37, 1, y.data(), 37, false);
    return y;
  };
  const FilterCacheStats s0 = filter_cache_stats();
  const std::vector<float> cold = run(0x0123456789abcdefULL);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(filter_cache_stats().stores, s0.stores + 1);
  const std::vector<float> warm = run(0x0123456789abcdefULL);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(filter_cache_stats().hits, s0.hits + 1);
  expect_same_bits(cold, warm);
  run(0x0123456789abcdeeULL);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(cache.entries().size(), 2u);
  CacheOff off;
  Winograd1d plain(w.data(), bias.data(), c.co, c.ci, c.k, c.d, c.tile);
  std::vector<float> y(static_cast<size_t>(37 * c.co));
  plain.run(x.data(), 37, 1, y.data(), 37, false);
  expect_same_bits(cold, y);
}

// The strided GEMM conv's packed blocks (a k 10 stride 5 layer: K not a multiple of the stride,
// so the last block has zero rows) come from the cache on a second build with the same origin,
// without making the weights, and run the same bits as blocks packed with the cache off.
TEST(FilterCache, StridedGemmBlocksComeFromTheCache) {
  const int64_t ci = 64, co = 96, k = 12, s = 5, T = 83, pad = 3;
  const int64_t T_out = (T + 2 * pad - k) / s + 1;
  const std::vector<float> w = normal(static_cast<size_t>(co * ci * k), 81);
  const std::vector<float> bias = normal(static_cast<size_t>(co), 82);
  const std::vector<float> x = normal(static_cast<size_t>(T * ci), 83);
  auto run = [&](const FilterWeights& fw) {
    const StridedGemmWeights p = pack_strided_gemm_conv1d(fw, bias.data(), co, ci, k, s);
    std::vector<float> y(static_cast<size_t>(T_out * co));
    strided_gemm_conv1d(p, x.data(), T, pad, y.data(), T_out, false);
    return y;
  };
  const std::vector<float> reference = [&] {
    CacheOff off;
    return run(w.data());
  }();
  CacheFolder cache;
  ScopedEnv every_layer("MESHNN_FILTER_CACHE_MIN_KB", "0");
  int made = 0;
  const FilterWeights fw(
      [&] {
        ++made;
        return w.data();
      },
      [] { return uint64_t{0x5712d3d}; });
  const FilterCacheStats s0 = filter_cache_stats();
  expect_same_bits(reference, run(fw));
  EXPECT_EQ(filter_cache_stats().stores, s0.stores + 1);
  const FilterWeights again(
      [&] {
        ++made;
        return w.data();
      },
      [] { return uint64_t{0x5712d3d}; });
  expect_same_bits(reference, run(again));
  EXPECT_EQ(filter_cache_stats().hits, s0.hits + 1);
  EXPECT_EQ(made, 1);
}

// A conv weight mapped from a checkpoint is named by its stored bytes and the step that makes it:
// the same bytes give the same origin wherever they live, one flipped bit or another step another
// origin; the values it makes are the eager conversion's.
TEST(FilterCache, MappedWeightOriginsNameStoredBytesAndStep) {
  const Tensor v = test::random_normal({6, 4, 3}, 61).to(DType::bf16);
  const Tensor g = test::random_uniform({6, 1, 1}, 62, 0.5f, 2.f);
  const std::map<std::string, Tensor> plain{{"a.weight", v}}, copy{{"a.weight", v.clone()}},
      norm{{"a.weight_g", g}, {"a.weight_v", v}};
  const ConvWeights p = map_conv1d_state(lookup_in(plain), "a", 4, 6, 3, false);
  const ConvWeights c = map_conv1d_state(lookup_in(copy), "a", 4, 6, 3, false);
  const ConvWeights n = map_conv1d_state(lookup_in(norm), "a", 4, 6, 3, false);
  ASSERT_TRUE(p.weight.has_origin() && n.weight.has_origin());
  EXPECT_EQ(p.weight.origin(), c.weight.origin());
  EXPECT_NE(p.weight.origin(), n.weight.origin());
  Tensor flipped = v.clone();
  static_cast<uint16_t*>(flipped.raw())[17] ^= 1;
  const std::map<std::string, Tensor> one_bit{{"a.weight", flipped}};
  EXPECT_NE(map_conv1d_state(lookup_in(one_bit), "a", 4, 6, 3, false).weight.origin(),
            p.weight.origin());
  EXPECT_TRUE(test::bit_equal(p.weight.get(), v.to(DType::f32)));
  EXPECT_TRUE(test::bit_equal(n.weight.get(), fold_weight_norm(g, v, "a.weight_v")));
  EXPECT_FALSE(MappedWeight(v.to(DType::f32)).has_origin());
}

// Through the conv engine: a Winograd conv and a polyphase (Winograd) transposed conv built from
// checkpoint weights make them on the cold load only; cold, warm and cache-off engines (the
// latter from eager f32 weights) give the same bits.
TEST(FilterCache, EnginesMakeCheckpointWeightsOnlyOnAMiss) {
  using conv::ConvEngine;
  using conv::ConvKind;
  using conv::ConvPads;
  using conv::ConvSpec;
  struct Case {
    ConvKind kind;
    int64_t ci, co, k, s;
  };
  for (const Case& cs :
       {Case{ConvKind::conv, 256, 256, 3, 1}, Case{ConvKind::deconv, 256, 128, 12, 4}}) {
    SCOPED_TRACE(cs.kind == ConvKind::conv ? "conv" : "deconv");
    ConvSpec spec;
    spec.kind = cs.kind;
    spec.spatial = 1;
    spec.c_in = cs.ci;
    spec.c_out = cs.co;
    spec.kernel = {cs.k, 1};
    spec.stride = {cs.s, 1};
    spec.bias = true;
    const Shape ws =
        cs.kind == ConvKind::conv ? Shape{cs.co, cs.ci, cs.k} : Shape{cs.ci, cs.co, cs.k};
    const Tensor stored = test::random_normal(ws, 71).to(DType::bf16);
    const Tensor bias = test::random_normal({cs.co}, 72);
    const Tensor x = test::random_normal({1, 29, cs.ci}, 73);
    ConvPads pads;
    pads.l = {cs.kind == ConvKind::conv ? 1 : 4, 0};
    pads.r = pads.l;
    int made = 0;
    auto run = [&](const MappedWeight& w) {
      ConvEngine e(spec, w, bias);
      const int64_t T_out = e.out_extent(0, 29, pads);
      Tensor y = Tensor::empty({1, T_out, cs.co});
      e.run(x, y, pads, false);
      return y;
    };
    auto mapped = [&] {
      return MappedWeight(ws, {stored}, "weight", [&] {
        ++made;
        return stored.to(DType::f32);
      });
    };
    const Tensor reference = [&] {
      CacheOff off;
      return run(MappedWeight(stored.to(DType::f32)));
    }();
    CacheFolder cache;
    const Tensor cold = run(mapped());
    EXPECT_EQ(made, 1);
    const Tensor warm = run(mapped());
    EXPECT_EQ(made, 1);
    EXPECT_EQ(cache.entries().size(), 1u);
    EXPECT_TRUE(test::bit_equal(reference, cold));
    EXPECT_TRUE(test::bit_equal(reference, warm));
  }
}

// Whole models (every layer cached: the small fixtures' layers are under the default minimum):
// a cold load stores entries, a warm one maps every one of them, and the outputs of cache off,
// cold and warm are the same bits, in f32 and bf16.
TEST(FilterCache, ModelsLoadedFromTheCacheDecodeTheSameBits) {
  // MiniMax-H3's folder stores weight-norm pairs (f32): the origins name g and v. Its tiny
  // config's layers are too thin for the default Winograd choice, so it runs with Winograd asked
  // for wherever it fits (the others keep the default choice).
  for (const char* fixture :
       {"ltx23_small.safetensors", "bigvgan_v2_24k_small.safetensors", "minimax_h3_tiny"})
    for (const Precision p : {Precision::fp32, Precision::bf16}) {
      SCOPED_TRACE(::testing::Message() << fixture << " " << precision_name(p));
      const bool h3 = std::string(fixture) == "minimax_h3_tiny";
      ScopedEnv algo("MESHNN_CONV_ALGO", h3 ? "winograd" : "auto");
      AudioModelOptions o;
      o.precision = StagePrecision(p);
      auto decode = [&] {
        const AudioModel m = AudioModel::load(test::fixture_path(fixture), o);
        return m.run(m.input_spec().example(0.4, 77));
      };
      const Tensor reference = [&] {
        CacheOff off;
        return decode();
      }();
      CacheFolder cache;
      ScopedEnv every_layer("MESHNN_FILTER_CACHE_MIN_KB", "0");
      const FilterCacheStats s0 = filter_cache_stats();
      const Tensor cold = decode();
      const FilterCacheStats s1 = filter_cache_stats();
      const Tensor warm = decode();
      const FilterCacheStats s2 = filter_cache_stats();
      EXPECT_GT(s1.stores, s0.stores);
      EXPECT_EQ(s2.hits - s1.hits, s1.stores - s0.stores);
      EXPECT_EQ(s2.stores, s1.stores);
      ASSERT_EQ(reference.numel(), warm.numel());
      EXPECT_EQ(std::memcmp(reference.data<float>(), cold.data<float>(), reference.nbytes()), 0);
      EXPECT_EQ(std::memcmp(reference.data<float>(), warm.data<float>(), reference.nbytes()), 0);
    }
}

}  // namespace
}  // namespace meshnn::kernels
