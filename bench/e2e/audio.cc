// meshnn-bench audio: LTX-2.3 audio decode (full architecture, seeded random weights) timed in
// meshnn and in PyTorch (bench/torch/torch_audio_bench.py on the same checkpoint and latent) in one
// invocation: medians, the ratio, real-time factors, peak memory, output agreement, and the mesh
// scaling from 1×1 with 1 thread to 1×2 with 1 thread per device. The 1×1 run is repeated per
// convolution algorithm setting (--algos, MESHNN_CONV_ALGO values; default "direct,auto": the
// path without fast algorithms, then the default choice), interleaved, with the speed-up and the
// waveform PSNR of each against the first.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "e2e/util.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "models/ltx/random.h"

namespace meshnn::cli {
namespace {

struct Args {
  double seconds = 4.0;
  int threads = 2, repeat = 3;
  uint64_t seed = 0;
  bool skip_torch = false, skip_mesh = false;
  std::string torch_impl = "stuffed";
  std::string algos = "direct,auto";
  std::vector<std::string> precisions;  // --precision: settings at the default algorithm
};

// Decodes `repeat` times after one warm-up (which packs the weights and creates every primitive)
// with one loaded decoder on `mesh`; returns the per-run seconds and the last output.
struct Timed {
  std::vector<double> runs;
  double first = 0;
  Tensor out;  // (1, 2, samples)
};
Timed time_decode(const AudioModel& dec, const std::string& mesh, int threads, const Tensor& latent,
                  int repeat) {
  Timed t;
  RunOptions run;
  run.mesh = mesh;
  run.threads = threads;
  run.chunk_frames = 0;  // one shot
  for (int r = 0; r < repeat + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    t.out = dec.run(latent, run);
    const double s = seconds_since(t0);
    if (r == 0)
      t.first = s;
    else
      t.runs.push_back(s);
  }
  return t;
}

std::string torch_bench_path() {
  for (std::string p : {std::string(MESHNN_SOURCE_DIR) + "/bench/torch/torch_audio_bench.py",
                        std::string("bench/torch/torch_audio_bench.py")})
    if (std::filesystem::exists(p)) return p;
  return "";
}

// The decoders of each setting (--algos, or --precision), timed `repeat` times after one warm-up
// in rounds that interleave the settings; the last setting is the one compared with PyTorch.
struct Settings {
  std::vector<std::string> names;
  std::vector<AudioModel> decs;
  std::vector<Timed> per;
};

Settings time_settings(const Args& a, const Tensor& latent) {
  Settings st;
  // One decoder per algorithm setting (built under its MESHNN_CONV_ALGO, which is read when the
  // layers are built), timed in rounds that interleave the settings so machine-load drift hits
  // them alike.
  // --precision instead: one decoder per precision (a mode, the preset or stage=mode pairs) at
  // the default algorithm choice.
  std::vector<std::string>& algos = st.names;
  algos = a.precisions.empty() ? split_csv(a.algos) : a.precisions;
  if (algos.empty()) algos.push_back("");
  for (const std::string& entry : algos) {
    if (!a.precisions.empty()) {
      st.decs.push_back(random_ltx23(a.seed, StagePrecision::parse(entry)));
      continue;
    }
    const auto [algo, precision] = algo_and_precision(entry);
    const ScopedConvAlgo env(algo);
    st.decs.push_back(random_ltx23(a.seed, precision));
  }
  st.per.resize(algos.size());
  for (int r = 0; r < a.repeat + 1; ++r)
    for (size_t i = 0; i < algos.size(); ++i) {
      const Timed one = time_decode(st.decs[i], "1x1", a.threads, latent, 0);
      st.per[i].out = one.out;
      if (r == 0)
        st.per[i].first = one.first;
      else
        st.per[i].runs.push_back(one.first);
    }
  return st;
}

void print_settings(const Args& a, const Settings& st, double audio_s) {
  const std::vector<Timed>& per = st.per;
  std::printf("\n%-48s %10s %10s %8s %9s %9s\n", "run", "median s", "first s", "RTF", "speed-up",
              "PSNR dB");
  for (size_t i = 0; i < st.names.size(); ++i) {
    const std::string label = "meshnn 1x1, " + std::to_string(a.threads) + " threads, " +
                              (a.precisions.empty() ? "algo " : "precision ") +
                              (st.names[i].empty() ? "(env)" : st.names[i]);
    const double med = median(per[i].runs);
    std::printf("%-48s %10.3f %10.3f %8.3f %8.2fx %9.1f\n", label.c_str(), med, per[i].first,
                med / audio_s, median(per[0].runs) / med,
                psnr_db(per[i].out.data<float>(), per[0].out.data<float>(), per[0].out.numel()));
  }
  std::printf(
      "(speed-up and PSNR against the first setting; first s = the first decode of a fresh "
      "decoder, which builds every plan)\n");
}

// 1x1 against 1x2 at one thread per device; ours: the 1x1 output the sharded one must match.
void print_mesh_scaling(const Args& a, const AudioModel& dec, const Tensor& latent,
                        const Timed& ours, double audio_s) {
  Timed s1 = time_decode(dec, "1x1", 1, latent, a.repeat);
  Timed s2 = time_decode(dec, "1x2", 1, latent, a.repeat);
  std::printf("%-34s %10.3f %10.3f %8.3f\n", "meshnn 1x1, 1 thread", median(s1.runs), s1.first,
              median(s1.runs) / audio_s);
  std::printf("%-34s %10.3f %10.3f %8.3f\n", "meshnn 1x2, 1 thread per device", median(s2.runs),
              s2.first, median(s2.runs) / audio_s);
  double diff = 0;
  for (int64_t i = 0; i < s2.out.numel(); ++i)
    diff = std::max(
        diff, static_cast<double>(std::abs(s2.out.data<float>()[i] - ours.out.data<float>()[i])));
  std::printf(
      "mesh speed-up 1x1/1t → 1x2/1t per device: %.2fx (sharded vs unsharded max |diff| %.2g)\n",
      median(s1.runs) / median(s2.runs), diff);
}

// PyTorch (bench/torch/torch_audio_bench.py) on the same weights and latent: its median, and the
// speed-up and waveform PSNR of ours (the compared setting's output and median) against it.
void compare_with_torch(const Args& a, const std::string& script, const Tensor& latent,
                        const Timed& ours, double ours_med, double audio_s) {
  // Same weights and latent for PyTorch: write them to a scratch folder.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("meshnn-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  models::save_random_ltx23((dir / "ckpt.safetensors").string(), a.seed);
  io::save_npy((dir / "latent.npy").string(), latent);
  // PyTorch's best set-up on these machines (docs/benchmarks.md): OpenBLAS without the preset core
  // type, glibc malloc keeping freed memory.
  const std::string cmd =
      "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 "
      "MALLOC_TRIM_THRESHOLD_=68719476736 /usr/bin/python3 " +
      script + " --threads " + std::to_string(a.threads) + " --repeat " + std::to_string(a.repeat) +
      " --upsample-impl " + a.torch_impl + " --checkpoint " + (dir / "ckpt.safetensors").string() +
      " --latent " + (dir / "latent.npy").string() + " --out " + (dir / "torch_out.npy").string();
  int rc = 0;
  const std::string text = run_capture(cmd, rc);
  if (rc != 0 || text.find('{') == std::string::npos) {
    std::printf("PyTorch run failed (exit %d): %s\n", rc, text.c_str());
    std::filesystem::remove_all(dir);
    return;
  }
  const nlohmann::json j = torch_bench_json(text);
  const double torch_med = j.at("median_s").get<double>();
  std::printf("%-34s %10.3f %10s %8.3f   (upsample %s, peak RSS %.0f MB)\n",
              ("PyTorch " + j.at("torch").get<std::string>() + ", " + std::to_string(a.threads) +
               " threads")
                  .c_str(),
              torch_med, "-", torch_med / audio_s, a.torch_impl.c_str(),
              j.at("peak_rss_mb").get<double>());
  // Output agreement: both are (B, 2, samples) planar.
  const Tensor ty = io::load_npy((dir / "torch_out.npy").string()).to(DType::f32);
  MESHNN_CHECK_AS(ShapeError, ty.shape() == ours.out.shape(), "PyTorch output ",
                  shape_str(ty.shape()), " vs ours ", shape_str(ours.out.shape()));
  const double psnr = psnr_db(ours.out.data<float>(), ty.data<float>(), ty.numel());
  std::printf("\nspeed-up over PyTorch (same threads): %.2fx; waveform PSNR vs PyTorch %.1f dB\n",
              torch_med / ours_med, psnr);
  std::filesystem::remove_all(dir);
}

void run(const Args& a) {
  std::printf(
      "meshnn bench audio: LTX-2.3 decode, %.1f s of audio, %d thread(s), %d repetitions "
      "(medians)\n",
      a.seconds, a.threads, a.repeat);
  std::printf("cpu: %s (%s); load average at start %.1f\n", cpu_features().brand.c_str(),
              cpu_features_str().c_str(), [] {
                double l[1];
                return getloadavg(l, 1) == 1 ? l[0] : -1.0;
              }());
  const int64_t T = std::max<int64_t>(2, static_cast<int64_t>(std::nearbyint(a.seconds * 25)));
  Tensor latent({1, 8, T, 16});
  std::mt19937_64 rng(a.seed + 1);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (int64_t i = 0; i < latent.numel(); ++i) latent.data<float>()[i] = nd(rng);
  const double audio_s = static_cast<double>((4 * T - 3) * 160) / 16000.0;

  const Settings st = time_settings(a, latent);
  const Timed& ours = st.per.back();  // the last setting is the one compared with PyTorch
  const double ours_med = median(ours.runs);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  print_settings(a, st, audio_s);
  if (!a.skip_mesh) print_mesh_scaling(a, st.decs.back(), latent, ours, audio_s);
  std::printf("meshnn peak RSS: %.0f MB\n", ru.ru_maxrss / 1024.0);

  const std::string script = torch_bench_path();
  if (a.skip_torch || script.empty()) {
    if (!a.skip_torch)
      std::printf("PyTorch comparison skipped: bench/torch/torch_audio_bench.py not found\n");
    return;
  }
  compare_with_torch(a, script, latent, ours, ours_med, audio_s);
}

const Registrar reg("audio", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("audio", "LTX-2.3 audio decode: meshnn vs PyTorch, mesh scaling");
  add_real_option(cmd, "--seconds", args->seconds, {0.08, 3600}, "audio length")
      ->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 1, max_threads(),
                 "threads for the 1x1 and PyTorch runs")
      ->capture_default_str();
  add_int_option(cmd, "--repeat", args->repeat, 1, 10000, "timed repetitions (after one warm-up)")
      ->capture_default_str();
  add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0}, "checkpoint seed")
      ->capture_default_str();
  cmd->add_option("--torch-impl", args->torch_impl,
                  "PyTorch upsampler: stuffed (fast) | convt (ltx-core verbatim)")
      ->capture_default_str();
  cmd->add_option("--algos", args->algos,
                  "comma-separated MESHNN_CONV_ALGO settings to time side by side, each "
                  "optionally @precision (auto@bf16; the last one is compared with PyTorch and "
                  "the mesh runs)")
      ->capture_default_str();
  auto* algos_opt = cmd->get_option("--algos");
  cmd->add_option("--precision", args->precisions,
                  "precisions to time side by side at the default algorithm, instead of --algos "
                  "(repeat the option: --precision fp32 --precision bf16 --precision "
                  "vae=bf16,vocoder=bf16; the last one is compared with PyTorch and the mesh runs)")
      ->excludes(algos_opt);
  cmd->add_flag("--skip-torch", args->skip_torch, "meshnn only");
  cmd->add_flag("--skip-mesh", args->skip_mesh, "skip the 1x1 vs 1x2 single-thread scaling runs");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
