// GR00T policy (VL adapter + flow-matching action head) at the released dims: whole get_action on
// S = 300 backbone tokens (text 4 | image 256 | text 40), 4 Euler steps, a seeded random
// checkpoint built in memory with one embodiment slice (the per-call work is the same for any
// number of embodiments; the other 31 slices would only cost memory).
//
// Case names: gr00t_policy_<version>_S300_K4/<precision>. Counters: adapter_ms (vlln, VL-SA,
// cross K/V hoist, state encoder: once per call), step_ms ((call − adapter) / K) and call_ms, all
// medians over the iterations (one process-wide policy per case, built once). The PyTorch
// side and the ratio, in one invocation:
//   /usr/bin/python3 bench/torch/torch_gr00t_policy_bench.py --threads 2 --meshnn-bench
//   build/meshnn_microbench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "meshnn/gr00t_config.h"
#include "models/gr00t/action_head.h"

namespace {

using namespace meshnn;
using namespace meshnn::gr00t;

constexpr int kTokens = 300;
constexpr int kSteps = 4;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// One checkpoint at a time (the released N1.7 head is ~1.3 G parameters), shared by precisions.
const std::map<std::string, Tensor>& checkpoint(Version v, const Config& cfg,
                                                const ActionHeadConfig& hc) {
  static Version cached = Version::n1_5;
  static std::map<std::string, Tensor> ck;
  if (ck.empty() || cached != v) {
    ck.clear();
    ck = make_random_head_checkpoint(cfg, hc, 1234);
    cached = v;
  }
  return ck;
}

void run_policy(benchmark::State& state, Version v, Precision prec) {
  Config cfg = Config::defaults(v);
  cfg.state.num_embodiments = 1;
  const ActionHeadConfig hc = ActionHeadConfig::defaults(v);
  std::vector<int> types(kTokens, 0);
  for (int i = 4; i < 260; ++i) types[i] = 1;
  const SlotLayout layout = SlotLayout::from_token_types(types);
  const std::map<std::string, Tensor>& ck = checkpoint(v, cfg, hc);
  PolicyOptions opt;
  opt.adapter.precision = opt.adapter.hoist_precision = opt.adapter.state_precision = prec;
  opt.head.precision = prec;
  PolicyRunner pol(cfg, hc, layout, lookup_in(ck), opt);
  Tensor x({1, kTokens, cfg.backbone_embedding_dim});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = float((i * 7919) % 201 - 100) * 0.02f;
  Tensor s({1, 1, cfg.state.max_state_dim});
  for (int64_t i = 0; i < s.numel(); ++i) s.data<float>()[i] = float(i % 7) * 0.1f;
  const Tensor noise = seeded_noise(hc.action_horizon, hc.action_dim, 5);
  const Tensor slots = layout.rows_to_slots(x);
  const Tensor mask = cfg.vl.n_blocks ? layout.key_valid_mask() : Tensor();
  pol.get_action(x, s, 0, noise, 0, kSteps);  // warm-up: plans, packing, t-only cache, page faults
  std::vector<double> call, adapter, step;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    Tensor a = pol.get_action(x, s, 0, noise, 0, kSteps);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(a.raw());
    // The adapter alone on the same input (not part of the timed call above).
    auto t2 = std::chrono::steady_clock::now();
    AdapterOutputs o = pol.adapter().forward(slots, mask, s, 0);
    auto t3 = std::chrono::steady_clock::now();
    pol.adapter().free_outputs(o);
    const double tc = std::chrono::duration<double>(t1 - t0).count();
    const double ta = std::chrono::duration<double>(t3 - t2).count();
    call.push_back(tc * 1e3);
    adapter.push_back(ta * 1e3);
    step.push_back((tc - ta) / kSteps * 1e3);
    state.SetIterationTime(tc);
  }
  state.counters["call_ms"] = median(call);
  state.counters["adapter_ms"] = median(adapter);
  state.counters["step_ms"] = median(step);
}

void register_policy() {
  for (Version v : {Version::n1_5, Version::n1_7})
    for (Precision p : {Precision::fp32, Precision::bf16}) {
      const std::string name = std::string("gr00t_policy_") + version_name(v) + "_S" +
                               std::to_string(kTokens) + "_K" + std::to_string(kSteps) + "/" +
                               precision_name(p);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [v, p](benchmark::State& st) { run_policy(st, v, p); })
          ->Unit(benchmark::kMillisecond)
          ->UseManualTime()
          ->Iterations(5);
    }
}

const bool registered = (register_policy(), true);

}  // namespace
