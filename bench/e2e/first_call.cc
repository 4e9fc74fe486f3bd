// meshnn-bench first-call: what a one-shot `meshnn audio-decode` pays before its output, split up.
// Loads an LTX-2.3 checkpoint (a given file, or a seeded random bf16 one at the real architecture
// written to a scratch folder), then decodes the same latent `--calls` times on one loaded decoder
// and prints: load seconds, RSS after load, call 1 (a fresh decoder: every plan, JIT kernel,
// packed layout and scratch page made here), the median of calls 2..n (steady state), and their
// ratio — the figure issue 13 bounds at 1.15. Each phase also gets its process CPU time (user +
// system): on a busy machine wall times swing, CPU time much less (run with
// OMP_WAIT_POLICY=passive so that waiting OpenMP threads do not spin and count as work).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "e2e/util.h"
#include "meshnn/audio.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string checkpoint, latent, mesh = "auto";
  double seconds = 4.0;
  int threads = 0, calls = 4;
  uint64_t seed = 0;
  std::string precision = "fp32";
};

// Process CPU seconds so far (user + system, every thread).
double cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Resident set size now (VmRSS) in MB, from /proc/self/status; -1 when unreadable.
double rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

void run(const Args& a) {
  double l[1];
  std::printf("meshnn bench first-call: load average at start %.1f\n",
              getloadavg(l, 1) == 1 ? l[0] : -1.0);
  std::filesystem::path scratch;
  std::string ckpt = a.checkpoint;
  if (ckpt.empty()) {
    scratch =
        std::filesystem::temp_directory_path() / ("meshnn-first-call-" + std::to_string(getpid()));
    std::filesystem::create_directories(scratch);
    ckpt = (scratch / "ltx23.safetensors").string();
    LtxAudioDecoder::save_random_ltx23(ckpt, a.seed);  // bf16 like the published checkpoints
  }
  Tensor latent;
  if (!a.latent.empty()) {
    latent = io::load_npy(a.latent).to(DType::f32);
    if (latent.rank() == 3)
      latent = latent.reshape({1, latent.dim(0), latent.dim(1), latent.dim(2)});
  } else {
    const int64_t T = std::max<int64_t>(2, static_cast<int64_t>(a.seconds * 25 + 0.5));
    latent = Tensor({1, 8, T, 16});
    std::mt19937_64 rng(a.seed + 1);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (int64_t i = 0; i < latent.numel(); ++i) latent.data<float>()[i] = nd(rng);
  }
  const double rss0 = rss_mb();
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_s();
  const LtxAudioDecoder dec = LtxAudioDecoder::load(ckpt, StagePrecision::parse(a.precision));
  const double load_s = seconds_since(t0);
  const double load_cpu = cpu_s() - cpu0;
  const double rss_load = rss_mb();
  RunOptions run;
  run.mesh = a.mesh;
  run.threads = a.threads;
  std::vector<double> calls, cpus;
  Tensor first, out;
  for (int i = 0; i < std::max(2, a.calls); ++i) {
    const auto c0 = std::chrono::steady_clock::now();
    const double u0 = cpu_s();
    out = dec.decode(latent, run);
    calls.push_back(seconds_since(c0));
    cpus.push_back(cpu_s() - u0);
    if (i == 0) first = out;
  }
  const double steady = median(std::vector<double>(calls.begin() + 1, calls.end()));
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double audio_s = static_cast<double>(out.dim(2)) / dec.sample_rate();
  std::printf("checkpoint %s (%.1f M values), latent %lld frames (%.2f s of audio), mesh %s\n",
              a.checkpoint.empty() ? "random LTX-2.3 bf16" : a.checkpoint.c_str(),
              dec.parameters() / 1e6, static_cast<long long>(latent.dim(2)), audio_s,
              a.mesh.c_str());
  std::printf("load %.3f s, CPU %.3f s (RSS %.0f -> %.0f MB)\n", load_s, load_cpu, rss0, rss_load);
  std::printf("call 1 %.3f s; calls 2..%zu:", calls[0], calls.size());
  for (size_t i = 1; i < calls.size(); ++i) std::printf(" %.3f", calls[i]);
  const double steady_cpu = median(std::vector<double>(cpus.begin() + 1, cpus.end()));
  std::printf("; median %.3f s\n", steady);
  std::printf("CPU s: call 1 %.3f, median of calls 2..%zu %.3f, ratio %.3f\n", cpus[0], cpus.size(),
              steady_cpu, cpus[0] / steady_cpu);
  std::printf("first / steady: %.3f (call 1 output %s the steady one); load + call 1 %.3f s\n",
              calls[0] / steady,
              std::isinf(psnr_db(first.data<float>(), out.data<float>(), out.numel()))
                  ? "equals"
                  : "DIFFERS from",
              load_s + calls[0]);
  std::printf("peak RSS %.0f MB\n", ru.ru_maxrss / 1024.0);
  if (!scratch.empty()) std::filesystem::remove_all(scratch);
}

const Registrar reg("first-call", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "first-call", "LTX-2.3 decode: load time, first call vs steady state on one decoder");
  cmd->add_option("--checkpoint", args->checkpoint, "LTX-2.3 checkpoint (default: random bf16)");
  cmd->add_option("--latent", args->latent, "latent .npy (default: random, --seconds long)");
  add_real_option(cmd, "--seconds", args->seconds, {0.08, 3600}, "random latent length")
      ->capture_default_str();
  cmd->add_option("--mesh", args->mesh, "device mesh, as audio-decode")->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 0, max_threads(),
                 "OpenMP threads per device (0 = cores / devices)")
      ->capture_default_str();
  add_int_option(cmd, "--calls", args->calls, 2, 10000, "decodes on the same latent (>= 2)")
      ->capture_default_str();
  cmd->add_option("--precision", args->precision, kPrecisionHelp)->capture_default_str();
  add_int_option(cmd, "--seed", args->seed, uint64_t{0}, ~uint64_t{0},
                 "random checkpoint / latent seed")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
