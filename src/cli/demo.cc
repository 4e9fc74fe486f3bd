// meshnn demo: the main job on the embedded default. Builds the registry's demo model (the first
// registered model with seeded random weights at its released size and latent input,
// AudioModel::random) in memory once; decodes a few seconds of a random latent on a local 1×2
// mesh (one single-thread device per core) and on 1×1 (one device, all cores), first cold then
// warm; prints the warm timings, the mesh speed-up and the sharded-vs-unsharded agreement, and
// writes the WAV. Nothing here names a model.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "cli/preflight.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/cpu.h"
#include "meshnn/io/output.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {
namespace {

struct Args {
  double seconds = 2.0;
  std::string out = "demo.wav", mesh = "1x2";
  uint64_t seed = 0;
  bool quiet = false;
};

// The model the demo runs: the first registered one with random weights that decodes latents
// (name "" when none has them).
AudioModelEntry demo_model() {
  const std::vector<AudioModelEntry> m = registered_models(
      [](const AudioModelEntry& e) { return e.has_random && e.input == "latent"; });
  return m.empty() ? AudioModelEntry{} : m.front();
}

// "stereo", "mono" or "N channels".
std::string channels_str(int64_t channels) {
  return channels == 1 ? "mono" : channels == 2 ? "stereo" : std::to_string(channels) + " channels";
}

// The largest |a − b|, and the peak and RMS of b (a and b: same shape).
struct Agreement {
  double max_diff = 0, peak = 0, rms = 0;
};
Agreement agreement(const Tensor& a, const Tensor& b) {
  Agreement g;
  const float* p = a.data<float>();
  const float* q = b.data<float>();
  for (int64_t i = 0; i < b.numel(); ++i) {
    g.max_diff = std::max(g.max_diff, static_cast<double>(std::abs(p[i] - q[i])));
    g.peak = std::max(g.peak, static_cast<double>(std::abs(q[i])));
    g.rms += static_cast<double>(q[i]) * q[i];
  }
  g.rms = std::sqrt(g.rms / static_cast<double>(b.numel()));
  return g;
}

void run(const Args& a) {
  const MeshConfig mc = parse_mesh(a.mesh);
  io::check_output_path(a.out, {});
  const AudioModelEntry entry = demo_model();
  MESHNN_CHECK_AS(InvalidArgument, !entry.name.empty(),
                  "no registered latent model has random weights");
  // Checked before the build: the input for --seconds on --mesh.
  const Shape shape = demo_input_shape(a.seconds, entry, a.mesh);
  const int64_t T = shape[entry.random_input.time_axis];
  auto t0 = std::chrono::steady_clock::now();
  const AudioModel model = AudioModel::random(entry.name, a.seed);
  const double build_s = seconds_since(t0);
  const int sr = model.output_spec().sample_rate;
  std::printf("meshnn demo — %s, random weights seed %llu\n", model.description().c_str(),
              static_cast<unsigned long long>(a.seed));
  std::printf("cpu: %s (%s), %d cores\n", cpu_features().brand.c_str(), cpu_features_str().c_str(),
              available_cores());
  std::printf(
      "checkpoint: %.1f M parameters, built and loaded once in %.1f s (shared by every device)\n",
      static_cast<double>(model.parameters()) / 1e6, build_s);
  const Tensor latent = entry.random_input.example(a.seconds, a.seed + 1);  // of `shape`
  // One shot on both meshes (no automatic chunks): the sharded and unsharded runs compare.
  RunOptions sharded_run, single_run;
  sharded_run.mesh = a.mesh;
  sharded_run.chunk_frames = 0;
  single_run.mesh = "1x1";
  single_run.chunk_frames = 0;
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
      y = model.run(latent, r);
      secs[i] = seconds_since(t);
    }
    std::printf("  %-34s cold %.2f s, warm %.2f s\n", label, secs[0], secs[1]);
    return std::make_pair(y, secs[1]);
  };
  std::printf("decoding %lld latent frames (%.2f s of audio):\n", static_cast<long long>(T),
              static_cast<double>(model.output_samples(T)) / sr);
  const std::string sharded_label =
      a.mesh + " mesh, " + std::to_string(per_dev) + " thread(s)/device";
  const std::string single_label = "1x1, " + std::to_string(available_cores()) + " thread(s)";
  const auto [sharded, t_sharded] = timed(sharded_run, sharded_label.c_str());
  const auto [single, t_single] = timed(single_run, single_label.c_str());
  const double audio_s = static_cast<double>(single.dim(2)) / sr;
  std::printf("warm real-time factor: %s %.3f, 1x1 %.3f; mesh speed-up %.2fx\n", a.mesh.c_str(),
              t_sharded / audio_s, t_single / audio_s, t_single / t_sharded);
  const Agreement g = agreement(sharded, single);
  std::printf("sharded vs unsharded: max |diff| %.3g (output peak %.3f, rms %.3f)\n", g.max_diff,
              g.peak, g.rms);
  io::write_wav(a.out, wav_samples(sharded), sr);
  std::printf("wrote %s (%d Hz %s, %.2f s)\n", std::filesystem::absolute(a.out).string().c_str(),
              sr, channels_str(sharded.dim(1)).c_str(), audio_s);
  MESHNN_CHECK(g.max_diff < 1e-4, "sharded and unsharded decodes disagree (max |diff| ", g.max_diff,
               ")");
}

const Registrar reg("demo", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "demo",
      "Decode a few seconds of audio on a local 1x2 mesh with random weights (the first "
      "registered latent model that has them: " +
          demo_model().name + ")");
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
