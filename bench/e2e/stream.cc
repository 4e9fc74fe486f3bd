// meshnn-bench stream: streaming decode against the one-shot call on the same weights and input.
// For each model (NVIDIA BigVGAN v2 24 kHz at its released size, seeded random weights written by
// tools/make_checkpoint.py; the LTX-2.3 chain at its real architecture, seeded in memory):
//   - the one-shot call (1x1, --threads threads), median of --repeat warm runs;
//   - streams pushed in chunks of each --chunks size: steady throughput (a warm stream over the
//     whole input, push + flush timed) as a fraction of the one-shot's, and the time from the push
//     that completes a chunk to its samples against that chunk's share of the one-shot compute;
//   - the 1x2 pipeline with one thread per device against one device with one thread;
//   - with --long-seconds: per-chunk time and RSS over a long stream (first vs last tenth);
//   - with --concurrent N, instead of the above: N streams batched in one StreamGroup and alone,
//     against one shot.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "e2e/util.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/filter_cache.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/core/profile.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::vector<std::string> models{"bigvgan", "ltx23"};
  std::string bigvgan_config = "bigvgan_v2_24khz_100band_256x";
  double seconds = 8.0;
  std::vector<int64_t> chunks{8, 16, 32, 64};
  int threads = 2, repeat = 3;
  double long_seconds = 0;
  int concurrent = 0;  // > 0: that many concurrent 32-frame streams, batched and alone
  double window_ms = 2.0;
};

// With MESHNN_FILTER_MEMORY=background, waits until the loaded model's filters are in private
// memory, so that every figure below runs from their final memory (the wait is printed).
void settle_filters() {
  if (std::string(filter_cache_memory()) != "background") return;
  const auto t0 = std::chrono::steady_clock::now();
  filter_cache_settle();
  std::printf("filter memory background: copies in place %.2f s after the load\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

double rss_mb() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

// What a bench needs of a model: the one-shot call, a stream factory, input slicing.
struct Subject {
  std::string name, frame_unit;
  Tensor input;  // public layout, time at dim `time_dim`
  int time_dim = 2;
  double audio_s = 0;
  std::function<Tensor(const Tensor&)> one_shot;  // 1x1, a.threads
  // A stream on `mesh` with `threads` per device: push / flush closures over one stream object.
  struct Stream {
    std::function<Tensor(const Tensor&)> push;
    std::function<Tensor()> flush;
    std::shared_ptr<void> keep;
  };
  std::function<Stream(const std::string& mesh, int threads, int64_t push_frames)> open;
  // A stream of a StreamGroup (one device, the group's threads).
  std::function<Stream(const std::shared_ptr<StreamGroup>& group)> open_in;
};

Subject::Stream make_stream(const AudioModel& model, const std::string& mesh, int threads,
                            int64_t push_frames) {
  StreamOptions o;
  o.mesh = mesh;
  o.threads = threads;
  o.push_frames = push_frames;
  auto s = std::make_shared<AudioStream>(model.stream(o));
  return {[s](const Tensor& x) { return s->push(x); }, [s] { return s->flush(); }, s};
}

Subject::Stream make_grouped(const AudioModel& model, const std::shared_ptr<StreamGroup>& group) {
  StreamOptions o;
  o.group = group;
  auto s = std::make_shared<AudioStream>(model.stream(o));
  return {[s](const Tensor& x) { return s->push(x); }, [s] { return s->flush(); }, s};
}

struct PassTimes {
  double total = 0;                  // push + flush of the whole input
  std::vector<double> push_s;        // per push
  std::vector<int64_t> push_frames;  // frames of each push
};

// One stream over the whole input in pushes of `chunk` frames.
PassTimes stream_pass(const Subject& sub, Subject::Stream& s, int64_t chunk) {
  PassTimes p;
  const int64_t n = sub.input.dim(sub.time_dim);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t at = 0; at < n; at += chunk) {
    const int64_t len = std::min(chunk, n - at);
    const Tensor x = sub.input.narrow(sub.time_dim, at, len);
    const auto t1 = std::chrono::steady_clock::now();
    s.push(x);
    p.push_s.push_back(seconds_since(t1));
    p.push_frames.push_back(len);
  }
  s.flush();
  p.total = seconds_since(t0);
  return p;
}

void bench_subject(const Subject& sub, const Args& a) {
  const int64_t n = sub.input.dim(sub.time_dim);
  std::printf("\n== %s: %.2f s of audio (%lld %s)\n", sub.name.c_str(), sub.audio_s,
              static_cast<long long>(n), sub.frame_unit.c_str());
  std::vector<double> one;
  for (int r = 0; r < a.repeat + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sub.one_shot(sub.input);
    if (r > 0) one.push_back(seconds_since(t0));
  }
  const double one_s = median(one);
  std::printf("one-shot, 1x1, %d threads: median %.3f s (RTF %.3f)\n", a.threads, one_s,
              one_s / sub.audio_s);
  std::printf("%-8s %10s %10s %11s %16s\n", "chunk", "stream s", "RTF", "throughput",
              "push / share");
  for (int64_t chunk : a.chunks) {
    Subject::Stream s = sub.open("1x1", a.threads, chunk);
    stream_pass(sub, s, chunk);  // warm: plans for every window shape of this chunk size
    std::vector<double> totals, ratios;
    for (int r = 0; r < a.repeat; ++r) {
      const PassTimes p = stream_pass(sub, s, chunk);
      totals.push_back(p.total);
      // A push's samples against that push's share of the one-shot compute; the first pushes fill
      // the look-ahead and the last is short, so the steady middle half is taken.
      for (size_t i = p.push_s.size() / 4; i < 3 * p.push_s.size() / 4; ++i)
        ratios.push_back(p.push_s[i] / (one_s * static_cast<double>(p.push_frames[i]) / n));
    }
    const double st = median(totals);
    std::printf("%-8lld %10.3f %10.3f %10.0f%% %15.2fx\n", static_cast<long long>(chunk), st,
                st / sub.audio_s, 100.0 * one_s / st, ratios.empty() ? 0.0 : median(ratios));
  }
  // Pipeline: 1x2 with 1 thread per device against 1x1 with 1 thread, 32-frame chunks (or the
  // largest given).
  const int64_t chunk =
      std::find(a.chunks.begin(), a.chunks.end(), 32) != a.chunks.end() ? 32 : a.chunks.back();
  double t_one = 0, t_two = 0;
  for (const char* mesh : {"1x1", "1x2"}) {
    Subject::Stream s = sub.open(mesh, 1, chunk);
    stream_pass(sub, s, chunk);
    std::vector<double> totals;
    for (int r = 0; r < a.repeat; ++r) totals.push_back(stream_pass(sub, s, chunk).total);
    (std::string(mesh) == "1x1" ? t_one : t_two) = median(totals);
  }
  std::printf("pipeline, chunks of %lld, 1 thread per device: 1x1 %.3f s, 1x2 %.3f s → %.2fx\n",
              static_cast<long long>(chunk), t_one, t_two, t_one / t_two);
}

// Per-chunk time and RSS over a long stream of repeated input.
void bench_long(const Subject& sub, const Args& a) {
  const int64_t n = sub.input.dim(sub.time_dim), chunk = 32;
  const int64_t total = static_cast<int64_t>(a.long_seconds / sub.audio_s * n);
  Subject::Stream s = sub.open("1x1", a.threads, chunk);
  std::vector<double> times;
  std::vector<double> rss;
  for (int64_t at = 0; at < total; at += chunk) {
    const int64_t off = at % (n - chunk);
    const auto t0 = std::chrono::steady_clock::now();
    s.push(sub.input.narrow(sub.time_dim, off, chunk));
    times.push_back(seconds_since(t0));
    rss.push_back(rss_mb());
  }
  s.flush();
  const size_t tenth = std::max<size_t>(1, times.size() / 10);
  const std::vector<double> first(times.begin() + 1, times.begin() + tenth + 1),
      last(times.end() - tenth, times.end());
  std::printf(
      "long stream: %.0f s of audio in %zu pushes of %lld frames: per-push median %.1f ms in the "
      "first tenth, %.1f ms in the last; RSS %.0f MB after the first tenth, %.0f MB at the end\n",
      a.long_seconds, times.size(), static_cast<long long>(chunk), 1e3 * median(first),
      1e3 * median(last), rss[tenth], rss.back());
}

// --concurrent N: N streams over the input in 32-frame pushes then flush, (a) batched: one
// StreamGroup, each stream pushed from its own thread, all started together; (b) alone: the same
// N streams' pushes taken in turn on one thread (what N clients cost without batching). Aggregate
// throughput (N × audio / wall time) against the one-shot's (audio / one-shot time).
void bench_concurrent(const Subject& sub, const Args& a) {
  const int N = a.concurrent;
  const int64_t n = sub.input.dim(sub.time_dim), chunk = 32;
  std::vector<double> one, batched, alone;
  profile_report("the load");  // MESHNN_PROFILE: each phase below on its own
  for (int r = 0; r < a.repeat + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    sub.one_shot(sub.input);
    if (r > 0) one.push_back(seconds_since(t0));
  }
  profile_report("the one-shot calls (warm-up included)");
  auto group = std::make_shared<StreamGroup>(a.window_ms, a.threads);
  std::vector<Subject::Stream> grouped, solo;
  for (int i = 0; i < N; ++i) {
    grouped.push_back(sub.open_in(group));
    solo.push_back(sub.open("1x1", a.threads, chunk));
  }
  for (int r = 0; r < a.repeat + 1; ++r) {  // the first of each: warm-up
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> th;
    for (int i = 0; i < N; ++i) th.emplace_back([&, i] { stream_pass(sub, grouped[i], chunk); });
    for (auto& t : th) t.join();
    if (r > 0) batched.push_back(seconds_since(t0));
    if (r == a.repeat) profile_report("the batched streams (warm-up included)");
  }
  for (int r = 0; r < a.repeat + 1; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t at = 0; at < n; at += chunk)
      for (int i = 0; i < N; ++i)
        solo[i].push(sub.input.narrow(sub.time_dim, at, std::min(chunk, n - at)));
    for (int i = 0; i < N; ++i) solo[i].flush();
    if (r > 0) alone.push_back(seconds_since(t0));
  }
  profile_report("the streams alone (warm-up included)");
  const double one_s = median(one), b = median(batched), s = median(alone);
  std::printf(
      "%d concurrent streams, %lld-frame pushes, window %.1f ms: one shot %.3f s; batched %.3f s "
      "(%.2fx one-shot throughput; %lld batches of %.1f streams, %lld pushes alone); alone %.3f s "
      "(%.2fx)\n",
      N, static_cast<long long>(chunk), a.window_ms, one_s, b, N * one_s / b,
      static_cast<long long>(group->batches()),
      group->batches() ? static_cast<double>(group->batched_pushes()) / group->batches() : 0.0,
      static_cast<long long>(group->solo_pushes()), s, N * one_s / s);
}

Tensor random_tensor(Shape shape, float mean, float sd, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(mean, sd);
  Tensor t = Tensor::empty(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = nd(rng);
  return t;
}

void run(const Args& a) {
  std::printf("meshnn bench stream: %d threads, %d repetitions (medians)\n", a.threads, a.repeat);
  std::printf("cpu: %s (%s); load average at start %.1f\n", cpu_features().brand.c_str(),
              cpu_features_str().c_str(), [] {
                double l[1];
                return getloadavg(l, 1) == 1 ? l[0] : -1.0;
              }());
  RunOptions one;
  one.mesh = "1x1";
  one.threads = a.threads;
  for (const std::string& m : a.models) {
    if (m == "bigvgan") {
      const std::filesystem::path dir =
          std::filesystem::temp_directory_path() / ("meshnn-stream-" + std::to_string(getpid()));
      std::filesystem::create_directories(dir);
      int rc = 0;
      const std::string out =
          run_capture("/usr/bin/python3 " + std::string(MESHNN_SOURCE_DIR) +
                          "/tools/make_checkpoint.py bigvgan " + dir.string() + " --config " +
                          a.bigvgan_config + " --fold --no-check 2>&1",
                      rc);
      if (rc != 0) {
        std::printf("could not write the BigVGAN checkpoint (exit %d): %s\n", rc, out.c_str());
        continue;
      }
      const AudioModel voc = load_bigvgan((dir / "bigvgan_generator.safetensors").string(),
                                          (dir / "config.json").string(), StagePrecision());
      std::filesystem::remove_all(dir);
      settle_filters();
      Subject sub;
      sub.name = "NVIDIA BigVGAN " + a.bigvgan_config;
      sub.frame_unit = "mel frames";
      const int sr = voc.output_spec().sample_rate;
      const int64_t hop = voc.output_samples(1);
      const int64_t frames = std::max<int64_t>(64, static_cast<int64_t>(a.seconds * sr / hop));
      sub.input = random_tensor({1, voc.input_spec().shape[1], frames}, -4.f, 2.f, 7);
      sub.audio_s = static_cast<double>(frames * hop) / sr;
      sub.one_shot = [&voc, one](const Tensor& x) { return voc.run(x, one); };
      sub.open = [&voc](const std::string& mesh, int threads, int64_t push) {
        return make_stream(voc, mesh, threads, push);
      };
      sub.open_in = [&voc](const std::shared_ptr<StreamGroup>& g) { return make_grouped(voc, g); };
      if (a.concurrent > 0) {
        bench_concurrent(sub, a);
        continue;
      }
      bench_subject(sub, a);
      if (a.long_seconds > 0) bench_long(sub, a);
    } else if (m == "ltx23") {
      const AudioModel dec = random_ltx23(0, StagePrecision());
      settle_filters();
      Subject sub;
      sub.name = "LTX-2.3 audio decode (mel-VAE → BigVGAN v2 → BWE)";
      sub.frame_unit = "latent frames";
      const int64_t frames = std::max<int64_t>(64, static_cast<int64_t>(a.seconds * 25));
      sub.input = random_tensor({1, 8, frames, 16}, 0.f, 1.f, 9);
      sub.audio_s = static_cast<double>(dec.output_samples(frames)) / dec.output_spec().sample_rate;
      sub.one_shot = [&dec, one](const Tensor& x) { return dec.run(x, one); };
      sub.open = [&dec](const std::string& mesh, int threads, int64_t push) {
        return make_stream(dec, mesh, threads, push);
      };
      sub.open_in = [&dec](const std::shared_ptr<StreamGroup>& g) { return make_grouped(dec, g); };
      if (a.concurrent > 0) {
        bench_concurrent(sub, a);
        continue;
      }
      bench_subject(sub, a);
      if (a.long_seconds > 0) bench_long(sub, a);
    } else {
      throw InvalidArgument("bench stream: unknown model '" + m + "' (bigvgan | ltx23)");
    }
  }
}

const Registrar reg("stream", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "stream", "Streaming decode: throughput and per-chunk latency against one shot, pipeline");
  cmd->add_option("--models", args->models, "bigvgan, ltx23")->capture_default_str();
  cmd->add_option("--bigvgan-config", args->bigvgan_config, "released BigVGAN config name")
      ->capture_default_str();
  add_real_option(cmd, "--seconds", args->seconds, {0.01, 3600}, "audio length of the input")
      ->capture_default_str();
  add_int_list_option(cmd, "--chunks", args->chunks, int64_t{1}, kMaxPushFrames,
                      "frames per push to measure (comma separated)")
      ->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 1, max_threads(), "threads (one device)")
      ->capture_default_str();
  add_int_option(cmd, "--repeat", args->repeat, 1, 10000, "timed repetitions (after one warm-up)")
      ->capture_default_str();
  add_real_option(cmd, "--long-seconds", args->long_seconds, {0, 24 * 3600},
                  "also stream this many seconds of audio in 32-frame pushes and report per-push "
                  "time and RSS at the start and the end")
      ->capture_default_str();
  add_int_option(cmd, "--concurrent", args->concurrent, 0, 256,
                 "instead, this many concurrent streams in 32-frame pushes: batched (one "
                 "StreamGroup, a thread per stream) and alone (one after another), against one "
                 "shot")
      ->capture_default_str();
  add_real_option(cmd, "--window-ms", args->window_ms, {0, 1000},
                  "the batched streams' StreamGroup window")
      ->capture_default_str();
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
