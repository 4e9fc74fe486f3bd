// The transform-point GEMMs of the 1-D Winograd conv (kernels/winograd1d.cc) on five GEMM
// backends, to decide which one the kernel should call (issue 22 item 5). Only the GEMMs are
// timed, with the kernel's own blocking: per dilation phase ⌈⌈T/d⌉/m⌉ tiles cut into blocks of
// nb tiles (1 MiB of transformed inputs and products per block, 64..256 tiles), and per block
// α GEMMs of the S segments (block rows × C_in)·(C_in × C_out), accumulated in the transform
// domain. Backends:
//   sgemm          dnnl_sgemm on the unpacked f32 filters (the kernel's f32 path; it re-packs
//                  B on every call)
//   dnnl_packed    oneDNN matmul primitive, f32 weights packed once
//                  (LinearPrimitive::set_packed_f32), one GEMM per segment, segments 2.. adding
//                  into the first (sum post-op)
//   dnnl_packed_k  the same primitive with the S segments stacked along K (one GEMM of depth
//                  S·C_in per transform point, as the packed bf16 path does; the overlapping
//                  rows, C_in apart, are copied to dense S·C_in rows by LinearPrimitive)
//   packed_bf16    our vdpbf16ps GEMM (kernels/packed_gemm.h; the kernel's native bf16 path),
//                  segments stacked along K, inputs converted to bf16 once per block
//   dnnl_bf16      oneDNN's native bf16 matmul (brgemm), weights packed once; it converts its
//                  f32 source to bf16 on every call
// f32 rows use the f32 tile (F(4,4) for K = 7: α = 7, S = 2), bf16 rows the bf16 tile (F(3,3):
// α = 5, S = 3). Threads: blocks are spread over the OpenMP threads, each thread running its own
// single-threaded GEMMs (a LinearPrimitive fork per thread), as the kernel does; no column
// chunking, so a call with one block keeps only one thread busy on every backend.
// GFLOP/s counts the Winograd multiply FLOPs actually run (2·rows·C_in·C_out per GEMM).
//
//   OMP_NUM_THREADS=1 meshnn_microbench --benchmark_filter=wgemm --benchmark_repetitions=3
#include <benchmark/benchmark.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "dnnl/matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/winograd1d.h"

namespace {

using namespace meshnn;

enum class Backend { sgemm, dnnl_packed, dnnl_packed_k, packed_bf16, dnnl_bf16 };

struct Layer {
  int64_t ci, co, d, t;
};

// The transform-point filters of one backend, w: [ξ][s][C_in][C_out] f32. packed_bf16: one
// packed matrix per ξ; dnnl_*: primitives [thread][ξ] (dnnl_packed_k) or [thread][ξ·S + s],
// thread 0 owning the originals, the others forks sharing their weights.
struct Filters {
  std::vector<kernels::PackedMatrix> pk;
  std::vector<std::vector<std::unique_ptr<dnnl_glue::LinearPrimitive>>> lp;
};

Filters make_filters(Backend be, std::vector<float>& w, int a, int64_t S, int64_t Ci, int64_t Co,
                     int threads) {
  Filters f;
  std::vector<kernels::PackedMatrix>& pk = f.pk;
  auto& lp = f.lp;
  lp.resize(threads);
  if (be == Backend::packed_bf16)
    for (int xi = 0; xi < a; ++xi)
      pk.emplace_back(w.data() + xi * S * Ci * Co, S * Ci, Co, Co, kernels::GemmType::bf16);
  if (be == Backend::dnnl_packed_k) {
    for (int xi = 0; xi < a; ++xi) {
      Tensor wt = Tensor::view(w.data() + xi * S * Ci * Co, {S * Ci, Co}, DType::f32);
      auto p = std::make_unique<dnnl_glue::LinearPrimitive>(
          wt, dnnl_glue::LinearPrimitive::WeightLayout::in_out, Tensor(), dnnl_glue::PostOp::none,
          Precision::fp32);
      p->set_packed_f32(true);
      for (int th = 1; th < threads; ++th) lp[th].push_back(p->fork());
      lp[0].push_back(std::move(p));
    }
  }
  if (be == Backend::dnnl_packed || be == Backend::dnnl_bf16) {
    for (int64_t q = 0; q < a * S; ++q) {
      Tensor wt = Tensor::view(w.data() + q * Ci * Co, {Ci, Co}, DType::f32);
      auto p = std::make_unique<dnnl_glue::LinearPrimitive>(
          wt, dnnl_glue::LinearPrimitive::WeightLayout::in_out, Tensor(), dnnl_glue::PostOp::none,
          be == Backend::dnnl_bf16 ? Precision::bf16 : Precision::fp32);
      if (be == Backend::dnnl_packed) p->set_packed_f32(true);
      for (int th = 1; th < threads; ++th) lp[th].push_back(p->fork());
      lp[0].push_back(std::move(p));
    }
  }
  return f;
}

// One block of n rows on thread th: the α transform points' GEMMs of vv (v16: its bf16 copy)
// into out, vstride / mstride apart per point.
void block_gemms(Backend be, const Filters& f, const std::vector<float>& w, int a, int64_t S,
                 int64_t Ci, int64_t Co, int64_t n, int th, float* vv, uint16_t* v16, float* out,
                 int64_t vstride, int64_t mstride) {
  if (be == Backend::packed_bf16) kernels::convert_to_bf16(vv, a * vstride, v16);
  for (int xi = 0; xi < a; ++xi) {
    if (be == Backend::dnnl_packed_k) {
      f.lp[th][static_cast<size_t>(xi)]->run(vv + xi * vstride, n, Ci, out + xi * mstride, Co,
                                             false);
      continue;
    }
    if (be == Backend::packed_bf16) {
      kernels::packed_gemm(f.pk[static_cast<size_t>(xi)], n, v16 + xi * vstride, Ci,
                           out + xi * mstride, Co, 0, Co, false);
      continue;
    }
    for (int64_t s = 0; s < S; ++s) {
      const float* src = vv + xi * vstride + s * Ci;
      float* dst = out + xi * mstride;
      if (be == Backend::sgemm)
        dnnl_sgemm('N', 'N', n, Co, Ci, 1.f, src, Ci, w.data() + (xi * S + s) * Ci * Co, Co,
                   s == 0 ? 0.f : 1.f, dst, Co);
      else
        f.lp[th][static_cast<size_t>(xi * S + s)]->run(src, n, Ci, dst, Co, s > 0);
    }
  }
}

void run_gemms(benchmark::State& state, Layer L, Backend be) {
  const bool bf16 = be == Backend::packed_bf16 || be == Backend::dnnl_bf16;
  if (bf16 && !kernels::packed_gemm_available(kernels::GemmType::bf16)) {
    state.SkipWithError("no AVX512-BF16");
    return;
  }
  const kernels::WinogradTile tile = kernels::default_winograd_tile(
      7, bf16 ? kernels::WinogradPrecision::bf16 : kernels::WinogradPrecision::f32);
  const int a = tile.alpha(), m = tile.m;
  const int64_t S = (7 + tile.r - 1) / tile.r, Ci = L.ci, Co = L.co;
  const int64_t n_t = ((L.t + L.d - 1) / L.d + m - 1) / m;
  const int64_t nb = std::clamp<int64_t>(1024 * 1024 / (a * (Ci + Co) * 4), 64, 256);
  std::vector<int64_t> blocks;  // rows of each block
  for (int64_t p = 0; p < L.d; ++p)
    for (int64_t i0 = 0; i0 < n_t; i0 += nb) blocks.push_back(std::min(nb, n_t - i0));

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> w(static_cast<size_t>(a * S * Ci * Co));
  for (float& x : w) x = u(rng);
  const int threads = omp_get_max_threads();
  const int64_t vrows = nb + S - 1;
  std::vector<std::vector<float>> v(threads), mo(threads);
  std::vector<std::vector<uint16_t>> v16(threads);
  for (int th = 0; th < threads; ++th) {
    v[th].resize(static_cast<size_t>(a * vrows * Ci));
    for (float& x : v[th]) x = u(rng);
    v16[th].resize(v[th].size());
    mo[th].resize(static_cast<size_t>(a * nb * Co));
  }
  const Filters filters = make_filters(be, w, a, S, Ci, Co, threads);
  const auto one_pass = [&] {
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t b = 0; b < blocks.size(); ++b) {
      const int th = omp_get_thread_num();
      block_gemms(be, filters, w, a, S, Ci, Co, blocks[b], th, v[th].data(), v16[th].data(),
                  mo[th].data(), vrows * Ci, nb * Co);
    }
  };
  one_pass();  // plans, JIT, first touch
  one_pass();
  for (auto _ : state) {
    one_pass();
    benchmark::ClobberMemory();
  }
  double flops = 0;
  for (int64_t n : blocks) flops += 2.0 * a * S * n * Ci * Co;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  state.counters["gemms"] = static_cast<double>(blocks.size() * a * S);
}

void register_all() {
  const Layer layers[] = {{768, 768, 1, 32},   {768, 768, 1, 64},  {768, 768, 1, 160},
                          {768, 768, 1, 4096}, {768, 768, 3, 160}, {768, 768, 3, 4096},
                          {128, 128, 1, 32},   {128, 128, 1, 160}, {128, 128, 1, 4096}};
  const std::pair<Backend, const char*> backends[] = {{Backend::sgemm, "sgemm"},
                                                      {Backend::dnnl_packed, "dnnl_packed"},
                                                      {Backend::dnnl_packed_k, "dnnl_packed_k"},
                                                      {Backend::packed_bf16, "packed_bf16"},
                                                      {Backend::dnnl_bf16, "dnnl_bf16"}};
  for (const Layer& L : layers)
    for (const auto& [be, name] : backends) {
      const std::string key = "wgemm_ci" + std::to_string(L.ci) + "_co" + std::to_string(L.co) +
                              "_k7_d" + std::to_string(L.d) + "_T" + std::to_string(L.t) + "/" +
                              name;
      benchmark::RegisterBenchmark(key.c_str(),
                                   [L, be = be](benchmark::State& s) { run_gemms(s, L, be); })
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.2);
    }
}

// The whole kernel (transforms included) on short inputs, one Winograd1d::run per iteration over
// all OpenMP threads: automatic (the short path of WinogradIsa where it applies: phases stacked,
// our packed f32 GEMM) against WinogradIsa::avx2 (dnnl_sgemm per phase block).
void run_conv(benchmark::State& state, int64_t c, int64_t k, int64_t d, int64_t T,
              kernels::WinogradIsa isa) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> w(static_cast<size_t>(c * c * k)), x(static_cast<size_t>(T * c)),
      y(static_cast<size_t>(T * c));
  for (float& v : w) v = u(rng) * 0.01f;
  for (float& v : x) v = u(rng);
  const kernels::Winograd1d wg(w.data(), nullptr, c, c, k, d, kernels::default_winograd_tile(k),
                               kernels::WinogradPrecision::f32, isa);
  const int64_t pad = (k - 1) * d / 2;
  wg.run(x.data(), T, pad, y.data(), T, false);  // plans, packing, first touch
  for (auto _ : state) {
    wg.run(x.data(), T, pad, y.data(), T, false);
    benchmark::ClobberMemory();
  }
  state.counters["short"] = wg.uses_short_path(T) ? 1 : 0;
}

void register_conv() {
  const std::pair<kernels::WinogradIsa, const char*> isas[] = {
      {kernels::WinogradIsa::automatic, "auto"}, {kernels::WinogradIsa::avx2, "sgemm"}};
  // The BigVGAN v2 stages a streaming push of 8 / 32 mel frames reaches (768 channels at 4× the
  // frames, 384 at 16×), every dilation of its residual blocks.
  for (const int64_t c : {768, 384, 192})
    for (const int64_t k : {3, 7, 11})
      for (const int64_t d : {1, 3, 5})
        for (const int64_t T : {32, 64, 128, 256})
          for (const auto& [isa, name] : isas) {
            const std::string key = "wconv_c" + std::to_string(c) + "_k" + std::to_string(k) +
                                    "_d" + std::to_string(d) + "_T" + std::to_string(T) + "/" +
                                    name;
            benchmark::RegisterBenchmark(
                key.c_str(),
                [c, k, d, T, isa = isa](benchmark::State& s) { run_conv(s, c, k, d, T, isa); })
                ->Unit(benchmark::kMicrosecond)
                ->MinTime(0.2);
          }
}

// Long inputs (one-shot decode shapes): the f32 default tile against bf16 operands at several
// tiles, the whole kernel per iteration (the tile choice of default_winograd_tile for bf16).
//   meshnn_microbench --benchmark_filter=wtile_ --benchmark_repetitions=3
void run_tile(benchmark::State& state, int64_t c, int64_t k, int64_t d, int64_t T,
              kernels::WinogradTile tile, kernels::WinogradPrecision p) {
  if (p == kernels::WinogradPrecision::bf16 &&
      !kernels::packed_gemm_available(kernels::GemmType::bf16)) {
    state.SkipWithError("no AVX512-BF16");
    return;
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> w(static_cast<size_t>(c * c * k)), x(static_cast<size_t>(T * c)),
      y(static_cast<size_t>(T * c));
  for (float& v : w) v = u(rng) * 0.01f;
  for (float& v : x) v = u(rng);
  const kernels::Winograd1d wg(w.data(), nullptr, c, c, k, d, tile, p);
  const int64_t pad = (k - 1) * d / 2;
  wg.run(x.data(), T, pad, y.data(), T, false);
  for (auto _ : state) {
    wg.run(x.data(), T, pad, y.data(), T, false);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * static_cast<double>(T * c * c * k),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void register_tiles() {
  using kernels::WinogradPrecision;
  for (const int64_t c : {768, 384, 128})
    for (const int64_t k : {3, 7, 11})
      for (const int64_t d : {1, 3}) {
        const int64_t T = c == 768 ? 2048 : c == 384 ? 8192 : 24000;
        std::vector<std::tuple<kernels::WinogradTile, WinogradPrecision, std::string>> v{
            {kernels::default_winograd_tile(k), WinogradPrecision::f32, "f32"},
            {kernels::default_winograd_tile(k, WinogradPrecision::bf16), WinogradPrecision::bf16,
             "bf16_default"}};
        for (const int m : {2, 3, 4, 6})
          if (k == 3 || m <= 4)
            v.emplace_back(kernels::WinogradTile{m, k == 3 ? 3 : m}, WinogradPrecision::bf16,
                           "bf16_F" + std::to_string(m));
        for (const auto& [tile, p, name] : v) {
          const std::string key = "wtile_c" + std::to_string(c) + "_k" + std::to_string(k) + "_d" +
                                  std::to_string(d) + "_T" + std::to_string(T) + "/" + name;
          benchmark::RegisterBenchmark(key.c_str(),
                                       [c, k, d, T, tile = tile, p = p](benchmark::State& s) {
                                         run_tile(s, c, k, d, T, tile, p);
                                       })
              ->Unit(benchmark::kMicrosecond)
              ->MinTime(0.2);
        }
      }
}

// Stacked stream pushes (StreamGroup): B rows of T outputs in one Winograd1d::run against the
// same rows one call each; "us_per_row" is the time per batch row.
//   meshnn_microbench --benchmark_filter=wbatch_
void run_batch(benchmark::State& state, int64_t c, int64_t k, int64_t d, int64_t T, int64_t B,
               bool stacked) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> w(static_cast<size_t>(c * c * k)), x(static_cast<size_t>(B * T * c)),
      y(static_cast<size_t>(B * T * c));
  for (float& v : w) v = u(rng) * 0.01f;
  for (float& v : x) v = u(rng);
  const kernels::Winograd1d wg(w.data(), nullptr, c, c, k, d, kernels::default_winograd_tile(k));
  const int64_t pad = (k - 1) * d / 2;
  const auto once = [&] {
    if (stacked) {
      wg.run(x.data(), B, T, pad, y.data(), T, false);
      return;
    }
    for (int64_t b = 0; b < B; ++b)
      wg.run(x.data() + b * T * c, T, pad, y.data() + b * T * c, T, false);
  };
  once();
  for (auto _ : state) {
    once();
    benchmark::ClobberMemory();
  }
  state.counters["us_per_row"] =
      benchmark::Counter(static_cast<double>(B), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
  state.counters["short"] = wg.uses_short_path(T, B) ? 1 : 0;
}

void register_batch() {
  for (const int64_t k : {3, 7, 11})
    for (const int64_t d : {1, 3, 5})
      for (const int64_t B : {1, 6})
        for (const bool stacked : {true, false}) {
          if (B == 1 && !stacked) continue;
          const std::string key = "wbatch_c768_k" + std::to_string(k) + "_d" + std::to_string(d) +
                                  "_T128_B" + std::to_string(B) + (stacked ? "/stacked" : "/calls");
          benchmark::RegisterBenchmark(
              key.c_str(),
              [k, d, B, stacked](benchmark::State& s) { run_batch(s, 768, k, d, 128, B, stacked); })
              ->Unit(benchmark::kMicrosecond)
              ->MinTime(0.2);
        }
}

const int registered = (register_all(), register_conv(), register_tiles(), register_batch(), 0);

}  // namespace
