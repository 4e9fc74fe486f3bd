// meshnn-bench scale: the per-layer account of a time-sharded call for a seeded random real-size
// model (e2e/scale_report.h). It runs the call once on a
// local 1xP mesh (threads), so it takes about one decode.
#include <cstdio>

#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "e2e/scale_report.h"

namespace meshnn::cli {
namespace {

const Registrar reg("scale", [](CLI::App& app) {
  auto o = std::make_shared<bench::ScaleBenchOptions>();
  o->bigvgan_config =
      std::string(MESHNN_SOURCE_DIR) + "/tests/fixtures/configs/bigvgan_v2_24khz_100band_256x.json";
  auto* cmd = app.add_subcommand(
      "scale", "Per-layer halo bytes and FLOPs of a time-sharded call, and the scale rule's plan");
  cmd->add_option("--model", o->model, "ltx23 | bigvgan | h3 (seeded random, real size)")
      ->check(CLI::IsMember({"ltx23", "bigvgan", "h3"}))
      ->capture_default_str();
  add_real_option(cmd, "--seconds", o->seconds, {0, 60, true}, "audio per call")
      ->capture_default_str();
  cmd->add_option("--link", o->link, "shm | 100g | 10g | 1g | GBITS:MICROSECONDS")
      ->capture_default_str();
  add_int_option(cmd, "--devices", o->devices, 2, 16, "devices along time (P)")
      ->capture_default_str();
  add_int_option(cmd, "--top", o->top, 0, 100000,
                 "print only the N exchanges moving the most bytes (0 = all, run order)")
      ->capture_default_str();
  add_int_option(cmd, "--push-frames", o->push_frames, int64_t{-1}, int64_t{4096},
                 "also the 1x2 stream pipeline's hand-over per push of N input frames (-1: 32 "
                 "for bigvgan, 8 for ltx23; 0: skip)")
      ->capture_default_str();
  add_int_option(cmd, "--seed", o->seed, uint64_t{0}, ~uint64_t{0}, "weights and input seed")
      ->capture_default_str();
  cmd->add_option("--bigvgan-config", o->bigvgan_config, "BigVGAN config.json (v2 24 kHz)")
      ->capture_default_str();
  cmd->callback([o] { std::fputs(bench::scale_bench_report(*o).c_str(), stdout); });
});

}  // namespace
}  // namespace meshnn::cli
