// `meshnn-bench scale` (bench/e2e/scale.cc parses its options): the scale account
// (src/api/scale_account.h) of a model's time-sharded call, the per-layer table with compute and
// link costs, and the rule's decision; and the 1x2 stream pipeline's hand-over per push
// (docs/scale_out.md, "Per layer, from the graph"). Benchmark code, not in the library; the tests
// compile it too (tests/api/scale_account_test.cc).
#pragma once

#include <cstdint>
#include <string>

#include "api/scale_account.h"
#include "graph/graph.h"
#include "meshnn/core/tensor.h"
#include "models/bigvgan/model.h"
#include "models/ltx/audio_decoder.h"
#include "runtime/scale_rule.h"

namespace meshnn::bench {

using api::ScaleAccount;
using runtime::LinkProfile;

// latent: (1, 8, T, 16), decoded time-sharded over `devices`.
ScaleAccount account_ltx(const models::LtxAudioDecoder& m, const Tensor& latent, int devices);
// mel: (1, num_mels, frames); `prefix` of the generator's keys ("" or "generator.").
ScaleAccount account_bigvgan(const models::BigVgan& m, const Tensor& mel, int devices,
                             const std::string& prefix = "");

// The account of a seeded random real-size model ("ltx23": LTX-2.3's reference config;
// "bigvgan": the BigVGAN v2 24 kHz config at `bigvgan_config`) for `seconds` of audio on
// `devices` along time; the input is seeded random (N(0, 1) latents, a speech-range log-mel).
ScaleAccount account_random_model(const std::string& model, double seconds, int devices,
                                  uint64_t seed, const std::string& bigvgan_config);

// A stream as the 1x2 pipeline cuts it (streaming/stream_engine.h): the graph's top-level
// operators (pipeline layout) pushed `push_frames` input rows at a time; what each operator hands
// on per push, the operators' measured time, and the cut balanced_cuts makes of that time (the
// engine's rule, on its own measurement). A hand-over also sends a 16-byte header.
struct StreamSplit {
  std::string model;
  int64_t push_frames = 0;
  int pushes = 0;                      // pushes averaged (after the look-ahead filled)
  std::vector<double> bytes_per_push;  // after operator k, mean per push
  std::vector<double> seconds;         // operator k's time over the averaged pushes
  size_t cut = 0;                      // stage 0 runs operators [0, cut)
};
StreamSplit stream_split(const std::string& model, graph::NodePtr graph, const Tensor& rows,
                         int64_t push_frames);
// Seeded random real-size model ("ltx23" | "bigvgan"), `seconds` of input.
StreamSplit stream_split_random_model(const std::string& model, double seconds, int64_t push_frames,
                                      uint64_t seed, const std::string& bigvgan_config);
std::string stream_table(const StreamSplit& s, const LinkProfile& link);

// The measured one-device compute of `seconds` of the model (api/measured_cost.h).
double measured_compute_seconds(const std::string& model, double seconds);

// The table: one line per exchange (kind, row shape, halo rows L/R, bytes per call over the
// line, FLOPs per call, compute at the model's measured GFLOP/s, the exchange's cost on `link`),
// `top` lines at most (0 = all) sorted by bytes, then the totals and plan_scale's decision.
std::string scale_table(const ScaleAccount& a, const LinkProfile& link, int top = 0);

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

// The printed report: the table, then the stream line. InvalidArgument for a bad model, link or
// length. The account runs the call once on a local 1xP mesh (threads).
std::string scale_bench_report(const ScaleBenchOptions& o);

}  // namespace meshnn::bench
