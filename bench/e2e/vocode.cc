// meshnn-bench vocode: NVIDIA BigVGAN (default v2 24 kHz) on a seeded random checkpoint at the
// released size (written by tools/make_checkpoint.py), mel → waveform for each --seconds, timed
// per convolution algorithm setting side by side (MESHNN_CONV_ALGO values, interleaved rounds),
// and in PyTorch (bench/torch/torch_bigvgan_bench.py, same weights and mel, same threads, its best
// set-up) unless --skip-torch.
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

namespace meshnn::cli {
namespace {

struct Args {
  std::string config = "bigvgan_v2_24khz_100band_256x";
  std::vector<double> seconds{1.0, 4.0};
  int threads = 2, repeat = 3;
  uint64_t seed = 0;
  bool skip_torch = false;
  std::string algos = "direct,auto";
};

// The checkpoint and config of one run, in its scratch folder.
struct Checkpoint {
  std::filesystem::path dir;
  std::string ckpt, config;
};

// Per setting: the timed seconds, the first (warm-up) call's seconds, the last output.
struct Measured {
  std::vector<std::vector<double>> runs;
  std::vector<double> first;
  std::vector<Tensor> outs;
};

// mel: (1, num_mels, frames) → one vocoder per setting, each timed `repeat` times after a
// warm-up.
Measured time_algos(const Args& a, const Checkpoint& ck, const std::vector<std::string>& algos,
                    const Tensor& mel) {
  RunOptions one;
  one.mesh = "1x1";
  one.threads = a.threads;
  Measured ms;
  ms.runs.resize(algos.size());
  ms.first.resize(algos.size());
  ms.outs.resize(algos.size());
  // One vocoder per setting, built under its MESHNN_CONV_ALGO (read when the layers are built),
  // timed in rounds that interleave the settings so machine-load drift hits them alike.
  std::vector<AudioModel> vocoders;
  for (const std::string& entry : algos) {
    const auto [algo, precision] = algo_and_precision(entry);
    const ScopedConvAlgo env(algo);
    vocoders.push_back(load_bigvgan(ck.ckpt, ck.config, precision));
  }
  for (int r = 0; r < a.repeat + 1; ++r)
    for (size_t i = 0; i < algos.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      ms.outs[i] = vocoders[i].run(mel, one);
      const double s = seconds_since(t0);
      if (r == 0)
        ms.first[i] = s;
      else
        ms.runs[i].push_back(s);
    }
  return ms;
}

// PyTorch (bench/torch/torch_bigvgan_bench.py) on the same weights and mel against the last
// setting.
void compare_with_torch(const Args& a, const Checkpoint& ck, const std::vector<std::string>& algos,
                        const Tensor& mel, const Measured& ms, double audio_s) {
  const std::filesystem::path& dir = ck.dir;
  io::save_npy((dir / "mel.npy").string(), mel);
  // PyTorch's best set-up on these machines (docs/benchmarks.md): OpenBLAS without the preset
  // core type, glibc malloc keeping freed memory, the zero-stuffed upsampler.
  const std::string cmd =
      "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0 "
      "MALLOC_TRIM_THRESHOLD_=68719476736 /usr/bin/python3 " +
      std::string(MESHNN_SOURCE_DIR) + "/bench/torch/torch_bigvgan_bench.py --config " + a.config +
      " --seed " + std::to_string(a.seed) + " --threads " + std::to_string(a.threads) +
      " --repeat " + std::to_string(a.repeat) + " --mel " + (dir / "mel.npy").string() + " --out " +
      (dir / "torch_out.npy").string();
  int rc = 0;
  const std::string text = run_capture(cmd, rc);
  if (rc != 0 || text.find('{') == std::string::npos) {
    std::printf("PyTorch run failed (exit %d): %s\n", rc, text.c_str());
    return;
  }
  const nlohmann::json j = torch_bench_json(text);
  const double torch_med = j.at("median_s").get<double>();
  const Tensor ty = io::load_npy((dir / "torch_out.npy").string()).to(DType::f32);
  const size_t last = algos.size() - 1;
  std::printf("%-44s %10.3f %10s %8.3f   (upsample stuffed, peak RSS %.0f MB)\n",
              ("PyTorch " + j.at("torch").get<std::string>() + ", " + std::to_string(a.threads) +
               " threads")
                  .c_str(),
              torch_med, "-", torch_med / audio_s, j.at("peak_rss_mb").get<double>());
  std::printf("speed-up over PyTorch (algo %s): %.2fx; waveform PSNR vs PyTorch %.1f dB\n",
              algos[last].c_str(), torch_med / median(ms.runs[last]),
              psnr_db(ms.outs[last].data<float>(), ty.data<float>(),
                      std::min(ty.numel(), ms.outs[last].numel())));
}

// One --seconds length: a seeded random mel, every setting timed, then PyTorch.
void run_length(const Args& a, const Checkpoint& ck, const std::vector<std::string>& algos,
                double secs) {
  int64_t hop = 0, sr = 0, num_mels = 0;
  {
    const AudioModel probe = load_bigvgan(ck.ckpt, ck.config, Precision::fp32);
    hop = probe.output_samples(1);
    sr = probe.output_spec().sample_rate;
    num_mels = probe.input_spec().shape[1];
  }
  const int64_t frames = std::max<int64_t>(1, std::llround(secs * sr / hop));
  Tensor mel({1, num_mels, frames});
  std::mt19937_64 rng(a.seed + 7);
  std::normal_distribution<float> nd(-4.f, 2.f);  // log-mel range of speech
  for (int64_t i = 0; i < mel.numel(); ++i) mel.data<float>()[i] = nd(rng);
  const double audio_s = static_cast<double>(frames * hop) / static_cast<double>(sr);

  const Measured ms = time_algos(a, ck, algos, mel);
  std::printf("\n%.2f s of audio (%ld mel frames at %ld Hz)\n", audio_s, long(frames), long(sr));
  std::printf("%-44s %10s %10s %8s %9s %9s\n", "run", "median s", "first s", "RTF", "speed-up",
              "PSNR dB");
  for (size_t i = 0; i < algos.size(); ++i) {
    const double med = median(ms.runs[i]);
    std::printf("%-44s %10.3f %10.3f %8.3f %8.2fx %9.1f\n",
                ("meshnn, " + std::to_string(a.threads) + " threads, algo " + algos[i]).c_str(),
                med, ms.first[i], med / audio_s, median(ms.runs[0]) / med,
                psnr_db(ms.outs[i].data<float>(), ms.outs[0].data<float>(), ms.outs[0].numel()));
  }
  if (!a.skip_torch) compare_with_torch(a, ck, algos, mel, ms, audio_s);
}

void run(const Args& a) {
  const std::string tools = std::string(MESHNN_SOURCE_DIR) + "/tools";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("meshnn-vocode-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::printf(
      "meshnn bench vocode: %s, seeded random weights, %d thread(s), %d repetitions "
      "(medians)\n",
      a.config.c_str(), a.threads, a.repeat);
  std::printf("cpu: %s (%s); load average at start %.1f\n", cpu_features().brand.c_str(),
              cpu_features_str().c_str(), [] {
                double l[1];
                return getloadavg(l, 1) == 1 ? l[0] : -1.0;
              }());
  int rc = 0;
  const std::string make = "/usr/bin/python3 " + tools + "/make_checkpoint.py bigvgan " +
                           dir.string() + " --config " + a.config + " --fold --no-check --seed " +
                           std::to_string(a.seed) + " 2>&1";
  const std::string made = run_capture(make, rc);
  if (rc != 0) {
    std::printf("could not write the checkpoint (exit %d): %s\n", rc, made.c_str());
    std::filesystem::remove_all(dir);
    return;
  }
  const Checkpoint ck{dir, (dir / "bigvgan_generator.safetensors").string(),
                      (dir / "config.json").string()};
  const std::vector<std::string> algos = split_csv(a.algos);
  for (const double secs : a.seconds) run_length(a, ck, algos, secs);
  std::filesystem::remove_all(dir);
}

const Registrar reg("vocode", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "vocode", "NVIDIA BigVGAN mel → waveform: conv algorithms side by side, and PyTorch");
  cmd->add_option("--config", args->config, "released BigVGAN config name")->capture_default_str();
  add_real_list_option(cmd, "--seconds", args->seconds, {0.01, 3600},
                       "audio lengths (comma separated)")
      ->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 1, max_threads(), "threads (meshnn and PyTorch)")
      ->capture_default_str();
  add_int_option(cmd, "--repeat", args->repeat, 1, 10000, "timed repetitions (after one warm-up)")
      ->capture_default_str();
  add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0}, "checkpoint seed")
      ->capture_default_str();
  cmd->add_option("--algos", args->algos,
                  "comma-separated MESHNN_CONV_ALGO settings, each optionally @precision "
                  "(auto@bf16)")
      ->capture_default_str();
  cmd->add_flag("--skip-torch", args->skip_torch, "meshnn only");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
