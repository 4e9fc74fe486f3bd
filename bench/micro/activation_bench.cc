// Fused anti-aliased SnakeBeta (BigVGAN Activation1d, ×2 kaiser up → SnakeBeta → ×2 kaiser down) at
// the shapes of bigvgan_v2_24khz_100band_256x for 1 s of audio, 1 and 2 OpenMP threads.
// bench/torch/torch_activation_bench.py times PyTorch's op chain on the same shapes and, given this
// binary, prints both with ratios.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <vector>

#include "kernels/snake.h"
#include "meshnn/layers/activation.h"
#include "meshnn/ops/resample.h"

namespace {

using meshnn::Tensor;
using meshnn::layers::AntiAliasedActivation;
using meshnn::layers::SnakeKind;

Tensor filled(meshnn::Shape s, float scale, uint32_t seed) {
  Tensor t = Tensor::empty(std::move(s));
  float* p = t.data<float>();
  uint32_t v = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    v = v * 1664525u + 1013904223u;
    p[i] = scale * (static_cast<float>(v >> 8) / 16777216.f - 0.5f);
  }
  return t;
}

// args: C, T, threads
void BM_AaSnakeBetaFused(benchmark::State& st) {
  const int64_t C = st.range(0), T = st.range(1);
  omp_set_num_threads(static_cast<int>(st.range(2)));
  AntiAliasedActivation act("bench", C, SnakeKind::snake_beta, true);
  const Tensor a = filled({C}, 1.f, 1), b = filled({C}, 1.f, 2);
  act.set_parameters(a, &b);
  const Tensor x = filled({1, T, C}, 4.f, 3);
  Tensor out = Tensor::empty({1, T, C});  // allocated once: the runtime reuses activation buffers
  for (auto _ : st) {
    act.forward_into(x, out);
    benchmark::DoNotOptimize(out.raw());
  }
  st.counters["Msamples/s"] =
      benchmark::Counter(static_cast<double>(C * T), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

// The fused kernel alone on each code path. args: C, T, threads, path (0 = the widest the CPU has,
// 1 = AVX2 forced).
void BM_AaKernelIsa(benchmark::State& st) {
  const int64_t C = st.range(0), T = st.range(1);
  omp_set_num_threads(static_cast<int>(st.range(2)));
  const auto isa = st.range(3) == 0 ? meshnn::kernels::ActIsa::best : meshnn::kernels::ActIsa::avx2;
  const Tensor x = filled({1, T, C}, 4.f, 3);
  const std::vector<float> taps(12, 1.f / 12), alpha(C, 1.f), inv(C, 1.f);
  Tensor out = Tensor::empty({1, T, C});
  for (auto _ : st) {
    meshnn::kernels::aa_snake_fused_f32(x.data<float>(), T * C, 1, C, 0, T, T, taps.data(),
                                        taps.data(), alpha.data(), inv.data(), out.data<float>(),
                                        T * C, isa);
    benchmark::DoNotOptimize(out.raw());
  }
  st.counters["Msamples/s"] =
      benchmark::Counter(static_cast<double>(C * T), benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

void BM_DepthwiseFirK12S2(benchmark::State& st) {
  const int64_t C = st.range(0), T = st.range(1);
  omp_set_num_threads(static_cast<int>(st.range(2)));
  const Tensor x = filled({1, 2 * T + 11, C}, 1.f, 4);
  const std::vector<float> taps(12, 0.1f);
  Tensor out = Tensor::empty({1, T, C});
  for (auto _ : st) {
    meshnn::ops::depthwise_tap_filter_into(x, taps, 2, out, st.range(3) != 0);
    benchmark::DoNotOptimize(out.raw());
  }
}

// (C, T) of each Activation1d in bigvgan_v2_24khz_100band_256x for 24 000 output samples; 1536 is
// the LTX-2.3 / BigVGAN initial width at the mel-frame rate.
void shapes(benchmark::internal::Benchmark* b) {
  const int64_t cts[][2] = {{1536, 188}, {768, 375},  {384, 1500}, {192, 3000},
                            {96, 6000},  {48, 12000}, {24, 24000}};
  for (int threads : {1, 2})
    for (const auto& ct : cts) b->Args({ct[0], ct[1], threads});
}

BENCHMARK(BM_AaSnakeBetaFused)
    ->Apply(shapes)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(7)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK(BM_AaKernelIsa)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (int threads : {1, 2})
        for (int path : {0, 1}) {
          b->Args({768, 1500, threads, path});   // wide, 4 s at the mel rate ×4
          b->Args({96, 48000, threads, path});   // 4 s of a late band
          b->Args({24, 192000, threads, path});  // 4 s of the last band (masked block)
        }
    })
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK(BM_DepthwiseFirK12S2)
    ->Args({96, 6000, 1, 0})
    ->Args({96, 6000, 1, 1})
    ->Args({96, 6000, 2, 0})
    ->Args({96, 6000, 2, 1})
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

}  // namespace
