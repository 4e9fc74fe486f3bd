// meshnn demo: the main job on the embedded default. Builds a seeded random LTX-2.3 audio
// checkpoint (real architecture, real key names) in memory and loads it once; decodes a few
// seconds of a random latent on a local 1×2 mesh (one single-thread device per core) and on 1×1
// (one device, all cores), first cold then warm; prints the warm timings, the mesh speed-up and
// the sharded-vs-unsharded agreement, and writes the 48 kHz WAV.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "cli/preflight.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/cpu.h"
#include "meshnn/io/output.h"
#include "meshnn/io/wav.h"
#include "models/ltx/typed_model.h"

namespace meshnn::cli {
namespace {

struct Args {
  double seconds = 2.0;
  std::string out = "demo.wav", mesh = "1x2";
  uint64_t seed = 0;
  bool quiet = false;
};

void run(const Args& a) {
  const int64_t T = demo_latent_frames(a.seconds, a.mesh);
  io::check_output_path(a.out, {});
  std::printf(
      "meshnn demo — LTX-2.3 audio decode (mel-VAE → BigVGAN v2 → BWE), random weights seed %llu\n",
      static_cast<unsigned long long>(a.seed));
  std::printf("cpu: %s (%s), %d cores\n", cpu_features().brand.c_str(), cpu_features_str().c_str(),
              available_cores());
  auto t0 = std::chrono::steady_clock::now();
  const LtxAudioDecoder decoder = LtxAudioDecoder::random_ltx23(a.seed);
  std::printf(
      "checkpoint: %.1f M parameters, built and loaded once in %.1f s (shared by every device)\n",
      static_cast<double>(decoder.parameters()) / 1e6, seconds_since(t0));
  Tensor latent({1, 8, T, 16});
  {
    std::mt19937_64 rng(a.seed + 1);
    std::normal_distribution<float> d(0.f, 1.f);
    for (int64_t i = 0; i < latent.numel(); ++i) latent.data<float>()[i] = d(rng);
  }
  RunOptions sharded_run, single_run;
  sharded_run.mesh = a.mesh;
  single_run.mesh = "1x1";
  const MeshConfig mc = parse_mesh(a.mesh);
  const int per_dev = std::max(1, available_cores() / (mc.rows * mc.cols));
  // Each decode is timed twice: the first call of a mesh shape packs the weights and compiles
  // the kernels for its shapes (cold); the second reuses them (warm: what a service sees).
  auto timed = [&](const RunOptions& run, const char* label) {
    Tensor y;
    double secs[2];
    for (int i = 0; i < 2; ++i) {
      Progress progress(a.quiet || i == 1);
      RunOptions r = run;
      r.progress = progress.fn();
      const auto t = std::chrono::steady_clock::now();
      y = decoder.decode(latent, r);
      secs[i] = seconds_since(t);
    }
    std::printf("  %-34s cold %.2f s, warm %.2f s\n", label, secs[0], secs[1]);
    return std::make_pair(y, secs[1]);
  };
  std::printf("decoding %lld latent frames (%.2f s of audio):\n", static_cast<long long>(T),
              static_cast<double>(decoder.output_samples(T)) / decoder.sample_rate());
  const std::string sharded_label =
      a.mesh + " mesh, " + std::to_string(per_dev) + " thread(s)/device";
  const std::string single_label = "1x1, " + std::to_string(available_cores()) + " thread(s)";
  const auto [sharded, t_sharded] = timed(sharded_run, sharded_label.c_str());
  const auto [single, t_single] = timed(single_run, single_label.c_str());
  const double audio_s = static_cast<double>(single.dim(2)) / decoder.sample_rate();
  std::printf("warm real-time factor: %s %.3f, 1x1 %.3f; mesh speed-up %.2fx\n", a.mesh.c_str(),
              t_sharded / audio_s, t_single / audio_s, t_single / t_sharded);
  double max_diff = 0, peak = 0, rms = 0;
  const float* p = sharded.data<float>();
  const float* q = single.data<float>();
  for (int64_t i = 0; i < single.numel(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::abs(p[i] - q[i])));
    peak = std::max(peak, static_cast<double>(std::abs(q[i])));
    rms += static_cast<double>(q[i]) * q[i];
  }
  rms = std::sqrt(rms / static_cast<double>(single.numel()));
  std::printf("sharded vs unsharded: max |diff| %.3g (output peak %.3f, rms %.3f)\n", max_diff,
              peak, rms);
  io::write_wav(a.out, wav_samples(sharded), decoder.sample_rate());
  std::printf("wrote %s (%d Hz stereo, %.2f s)\n",
              std::filesystem::absolute(a.out).string().c_str(), decoder.sample_rate(), audio_s);
  MESHNN_CHECK(max_diff < 1e-4, "sharded and unsharded decodes disagree (max |diff| ", max_diff,
               ")");
}

const Registrar reg("demo", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "demo", "Decode a few seconds of LTX-2.3 audio (random weights) on a local 1x2 mesh");
  add_real_option(cmd, "--seconds", args->seconds, {0.08, 60}, "audio length")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "output .wav")->capture_default_str();
  cmd->add_option("--mesh", args->mesh, "mesh for the sharded run")->capture_default_str();
  add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0}, "checkpoint seed")
      ->capture_default_str();
  cmd->add_flag("--quiet", args->quiet, "no progress bars");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
