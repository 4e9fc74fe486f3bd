#include "api/measured_cost.h"

namespace meshnn::api {

runtime::CallCost measured_cost(const std::string& kind, double seconds) {
  // compute: one device, 1 thread, real-size models, this machine's CPU, per second of audio
  // (measured 2026-12-05, tools/bench_scale.sh, 2 s clips: LTX-2.3 3.98 s, BigVGAN v2 24 kHz
  // 3.02 s, MiniMax-H3 1.69 s for 2 s of stereo). halo / rounds: derived from the graph by
  // `meshnn-bench scale` (the sharded run's own exchange log, 1x2; docs/scale_out.md, "Per
  // layer"): the halo bytes of a call over the line, both directions — fixed, a halo is rows ×
  // channels whatever the clip — and the halo exchanges, one per time-sharded layer. gather: the
  // output's final all-gather per second of audio (f32 samples × channels).
  struct Model {
    double compute_per_s, halo_bytes, rounds, gather_per_s;
  };
  Model m{};
  if (kind == "bigvgan")
    m = {1.51, 2.43e6, 225, 24000 * 4};
  else if (kind == "minimax-h3")  // its time split has no account: BigVGAN's halos stand in
    m = {0.42, 2.43e6, 225, 48000 * 4};
  else  // ltx-2.3, ltx-2 and anything unknown
    m = {1.99, 5.14e6, 441, 48000 * 2 * 4};
  return {m.compute_per_s * seconds, m.halo_bytes + m.gather_per_s * seconds, m.rounds};
}

}  // namespace meshnn::api
