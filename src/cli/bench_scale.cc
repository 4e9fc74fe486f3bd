// meshnn bench scale: the per-layer account of a time-sharded call (api/scale_report.h) for a
// seeded random real-size model: every halo exchange with its rows and bytes, every layer's FLOPs,
// the compute at the measured rate and the exchange's cost on a link, then the totals and the
// scale rule's decision (docs/scale_out.md). The account comes from one sharded run on a local
// 1xP mesh (threads), so it takes about one decode.
#include <cstdio>

#include "api/scale_report.h"
#include "api/scale_rule.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string model = "ltx23";
  double seconds = 2.0;
  std::string link = "10g";
  int devices = 2;
  int top = 0;
  int64_t push_frames = -1;  // the model's default: BigVGAN 32 mel frames, LTX-2.3 8 latents
  uint64_t seed = 0;
  std::string bigvgan_config =
      std::string(MESHNN_SOURCE_DIR) + "/tests/fixtures/configs/bigvgan_v2_24khz_100band_256x.json";
};

void run(const Args& a) {
  const api::LinkProfile link = api::parse_link(a.link);
  if (a.model == "h3") {
    // Stereo MiniMax-H3 splits by item (one channel per device): no halos, only the output meets.
    const api::CallCost cost = api::measured_cost("minimax-h3", a.seconds);
    const api::ScalePlan plan = api::plan_scale(a.devices, 2, cost, link);
    std::printf("MiniMax-H3, %.2f s of stereo over %d devices: %s\n", a.seconds, a.devices,
                plan.reason.c_str());
    return;
  }
  const api::ScaleAccount acc =
      api::account_random_model(a.model, a.seconds, a.devices, a.seed, a.bigvgan_config);
  std::fputs(api::scale_table(acc, link, a.top).c_str(), stdout);
  const int64_t push = a.push_frames >= 0 ? a.push_frames : (a.model == "bigvgan" ? 32 : 8);
  if (push > 0)
    std::fputs(api::stream_table(api::stream_split_random_model(a.model, a.seconds, push, a.seed,
                                                                a.bigvgan_config),
                                 link)
                   .c_str(),
               stdout);
}

const Registrar reg("bench-scale", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = bench_parent(app)->add_subcommand(
      "scale", "Per-layer halo bytes and FLOPs of a time-sharded call, and the scale rule's plan");
  cmd->add_option("--model", args->model, "ltx23 | bigvgan | h3 (seeded random, real size)")
      ->check(CLI::IsMember({"ltx23", "bigvgan", "h3"}))
      ->capture_default_str();
  add_real_option(cmd, "--seconds", args->seconds, {0, 60, true}, "audio per call")
      ->capture_default_str();
  cmd->add_option("--link", args->link, "shm | 100g | 10g | 1g | GBITS:MICROSECONDS")
      ->capture_default_str();
  add_int_option(cmd, "--devices", args->devices, 2, 16, "devices along time (P)")
      ->capture_default_str();
  add_int_option(cmd, "--top", args->top, 0, 100000,
                 "print only the N exchanges moving the most bytes (0 = all, run order)")
      ->capture_default_str();
  add_int_option(cmd, "--push-frames", args->push_frames, int64_t{-1}, int64_t{4096},
                 "also the 1x2 stream pipeline's hand-over per push of N input frames (-1: 32 "
                 "for bigvgan, 8 for ltx23; 0: skip)")
      ->capture_default_str();
  add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0}, "weights and input seed")
      ->capture_default_str();
  cmd->add_option("--bigvgan-config", args->bigvgan_config, "BigVGAN config.json (v2 24 kHz)")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
