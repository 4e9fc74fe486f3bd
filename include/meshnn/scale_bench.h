// `meshnn-bench scale`: the per-layer account of a time-sharded call (every halo exchange with its
// layer, rows and bytes, every layer's FLOPs, the compute at the measured rate and each
// exchange's cost on a link), its totals and the scale rule's decision, for a seeded random
// real-size model; and the 1x2 stream pipeline's hand-over per push. docs/scale_out.md,
// "Per layer, from the graph". The account runs the call once on a local 1xP mesh (threads).
#pragma once

#include <cstdint>
#include <string>

namespace meshnn {

struct ScaleBenchOptions {
  std::string model = "ltx23";  // ltx23 | bigvgan | h3 (items split: no halos, the rule only)
  double seconds = 2.0;         // audio per call, (0, 60]
  std::string link = "10g";     // shm | 100g | 10g | 1g | GBITS:MICROSECONDS
  int devices = 2;              // P along time
  int top = 0;                  // the N exchanges moving the most bytes (0 = all, run order)
  int64_t push_frames = -1;     // stream pushes: -1 = the model's default, 0 = no stream line
  uint64_t seed = 0;
  std::string bigvgan_config;  // BigVGAN v2 24 kHz config.json (bigvgan only)
};

// The printed report. InvalidArgument for a bad model, link or length.
std::string scale_bench_report(const ScaleBenchOptions& o);

}  // namespace meshnn
