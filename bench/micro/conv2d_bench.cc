// The mel-VAE decoder's 3×3 Conv2d layers (LTX-2.3, 4 s of audio: 100 latent frames, widths
// 16 / 32 / 64 at channels 512 / 256 / 128), causal in time, per algorithm:
//   conv2d_ci<C_in>_co<C_out>_H<H>_W<W>/winograd|/onednn   (MESHNN_CONV_ALGO for that layer)
// GFLOP/s counts the direct algorithm's 2·H_out·W_out·C_out·C_in·9 per call.
//
//   OMP_NUM_THREADS=2 meshnn_microbench --benchmark_filter=conv2d
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "meshnn/layers/conv.h"

namespace {

using namespace meshnn;

void run_case(benchmark::State& state, int64_t ci, int64_t co, int64_t H, int64_t W,
              const char* algo) {
  setenv("MESHNN_CONV_ALGO", algo, 1);  // read when the layer is built
  Conv2dConfig c;
  c.in_channels = ci;
  c.out_channels = co;
  c.kernel_size = {3, 3};
  c.padding_mode = "causal_height";
  Conv2d layer(c, "conv2d");
  Tensor w({co, ci, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i)
    w.data<float>()[i] = float((i * 7919) % 201 - 100) * 1e-4f;
  layer.set_weights(w, Tensor({co}));
  unsetenv("MESHNN_CONV_ALGO");
  Tensor x({1, H, W, ci});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = float((i * 104729) % 201 - 100) * 0.01f;
  const Shape ys = layer.output_shape(x.shape());
  Tensor y(ys);
  state.SetLabel(layer.impl_info(x.shape()));
  layer.forward_into(x, y);  // warm-up: plan, packing, page faults
  for (auto _ : state) {
    layer.forward_into(x, y);
    benchmark::DoNotOptimize(y.raw());
  }
  const double flop = 2.0 * double(ys[1]) * double(ys[2]) * double(co) * double(ci) * 9.0;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

struct Shape2 {
  int64_t ci, co, H, W;
};
const std::vector<Shape2> kShapes = {
    {8, 512, 100, 16},    // conv_in
    {512, 512, 100, 16},  // level-2 resblocks
    {512, 512, 199, 32},  // upsample conv
    {512, 256, 199, 32},  // level-1 first conv
    {256, 256, 199, 32},  //
    {256, 256, 397, 64},  // upsample conv
    {256, 128, 397, 64},  // level-0 first conv
    {128, 128, 397, 64},  //
    {128, 2, 397, 64},    // conv_out
};

int register_all() {
  for (const Shape2& s : kShapes)
    for (const char* algo : {"winograd", "onednn"}) {
      char name[128];
      std::snprintf(name, sizeof(name), "conv2d_ci%ld_co%ld_H%ld_W%ld/%s", long(s.ci), long(s.co),
                    long(s.H), long(s.W), algo);
      benchmark::RegisterBenchmark(
          name, [=](benchmark::State& st) { run_case(st, s.ci, s.co, s.H, s.W, algo); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.3);
    }
  return 0;
}
const int kRegistered = register_all();

}  // namespace
