// GR00T VL adapter at the released dims: N1.5 (vlln + 4 VL-SA blocks + 8 hoisted K/V) and N1.6
// (vlln + 16 hoisted K/V, no VL-SA) on S = 300 backbone tokens (text 4 | image 256 | text 40),
// seeded random checkpoints built in memory (tools/make_gr00t_checkpoint.py writes the same keys).
//
// Case names: gr00t_<version>_S<tokens>/<precision>, e.g. gr00t_n1.5_S300/fp32. The PyTorch side
// (bench/torch/torch_gr00t_bench.py) runs this binary with the same thread count and prints both
// medians and the ratio in one invocation:
//   /usr/bin/python3 bench/torch/torch_gr00t_bench.py --threads 2 --meshnn-bench
//   build/meshnn_microbench
// bf16 on a CPU without avx512_bf16 is emulated (bf16-rounded operands on the f32 kernel), so it
// costs the f32 time plus the rounding passes; it is not faster here.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>

#include "meshnn/core/cpu.h"
#include "meshnn/gr00t_config.h"
#include "models/gr00t/adapter.h"
#include "models/gr00t/description.h"

namespace {

using namespace meshnn;
using namespace meshnn::gr00t;

constexpr int kTokens = 300;

SlotLayout bench_layout() {
  std::vector<int> types(kTokens, 0);
  for (int i = 4; i < 260; ++i) types[i] = 1;
  return SlotLayout::from_token_types(types);
}

// One checkpoint per version, shared by the precision cases (generation takes seconds).
const std::map<std::string, Tensor>& checkpoint(Version v) {
  static std::map<Version, std::map<std::string, Tensor>> cache;
  auto it = cache.find(v);
  if (it == cache.end())
    it = cache.emplace(v, make_random_checkpoint(Config::defaults(v), 1234)).first;
  return it->second;
}

void run_case(benchmark::State& state, Version v, Precision prec) {
  const Config cfg = Config::defaults(v);
  const SlotLayout layout = bench_layout();
  AdapterOptions opt;
  opt.precision = prec;
  opt.hoist_precision = prec;
  opt.state_precision = prec;
  VlAdapter ad(cfg, layout, lookup_in(checkpoint(v)), opt);
  Tensor x({1, 1, layout.s_pad(), cfg.vl.dim});
  for (int64_t i = 0; i < layout.seq_len() * cfg.vl.dim; ++i)
    x.data<float>()[i] = float((i * 7919) % 201 - 100) * 0.02f;
  Tensor s({1, 1, cfg.state.max_state_dim});
  for (int64_t i = 0; i < s.numel(); ++i) s.data<float>()[i] = float(i % 7) * 0.1f;
  const Tensor mask = cfg.vl.n_blocks ? layout.key_valid_mask() : Tensor();
  {
    AdapterOutputs warm = ad.forward(x, mask, s, 3);  // plans, packing, page faults
    ad.free_outputs(warm);
  }
  for (auto _ : state) {
    AdapterOutputs out = ad.forward(x, mask, s, 3);
    benchmark::DoNotOptimize(out.kv.begin()->second.first.raw());
    ad.free_outputs(out);
  }
  const double flops = adapter_flops(ad.plan());  // from the adapter's key table
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(cpu_features().avx512_bf16 ? "bf16 native" : "bf16 emulated") + "; " +
                 ad.plan().key_sets.begin()->first);
}

void register_all() {
  for (Version v : {Version::n1_5, Version::n1_6})
    for (Precision p : {Precision::fp32, Precision::bf16}) {
      const std::string name = std::string("gr00t_") + version_name(v) + "_S" +
                               std::to_string(kTokens) + "/" + precision_name(p);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [v, p](benchmark::State& st) { run_case(st, v, p); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1)
          ->Repetitions(v == Version::n1_5 ? 5 : 9)
          ->ReportAggregatesOnly(true);
    }
}

const bool registered = (register_all(), true);

}  // namespace
