// meshnn audio-encode: a WAV + any registered model with an encoder (AudioModel::catalog()'s
// has_encoder: the wave at its sample rate → (B, C, T), T = ⌈samples / hop⌉, zero right-pad,
// never a crop) → latents .npy, one batch item per WAV channel. The model is found by
// meshnn::AudioModel::load.
#include <cstdio>

#include "cli/audio_common.h"
#include "cli/batch_limit.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string checkpoint, wav, out, log_std, precision = "fp32", mesh = "auto", backend = "local";
  int threads = 0;
  bool normalize = false, quiet = false, stream = false, allow_unknown_config = false;
  int64_t push_samples = 0;  // 0: not given (8000 with --stream)
};

// --stream: the wave pushed --push-samples at a time through an encode stream; the frames that
// come out are gathered (the .npy needs its length up front) and written at the end. Returns
// the mean (B, C, T) and fills *log_std.
Tensor encode_streamed(const AudioModel& model, const Tensor& wave, const RunOptions& run,
                       int64_t push, Tensor* log_std, bool quiet) {
  AudioEncodeStream st = model.encode_stream(run);
  const int64_t B = wave.dim(0), S = wave.dim(2);
  std::vector<Tensor> means, logs;
  double first_s = -1;
  const auto t0 = std::chrono::steady_clock::now();
  auto keep = [&](Tensor m, Tensor ls) {
    if (m.dim(2) > 0 && first_s < 0) first_s = seconds_since(t0);
    means.push_back(std::move(m));
    logs.push_back(std::move(ls));
  };
  for (int64_t at = 0; at < S; at += push) {
    Tensor ls;
    Tensor m = st.push(wave.narrow(2, at, std::min(push, S - at)).clone(), &ls);
    keep(std::move(m), std::move(ls));
  }
  Tensor ls;
  Tensor m = st.flush(&ls);
  keep(std::move(m), std::move(ls));
  if (!quiet && st.returns_output())
    std::printf(
        "stream: %lld sample(s) per push, look-ahead %lld samples (%.0f ms); first frame after "
        "%.2f s\n",
        static_cast<long long>(push), static_cast<long long>(st.lookahead_samples()),
        st.lookahead_ms(), first_s);
  if (!st.returns_output()) return Tensor::empty({B, model.input_spec().shape[1], 0});
  *log_std = concat(logs, 2);
  return concat(means, 2);
}

void run(const Args& a) {
  const AllowUnknownConfig lenient(a.allow_unknown_config);  // every config read below
  const auto t0 = std::chrono::steady_clock::now();
  io::check_output_path(a.out, {a.wav});
  if (!a.log_std.empty()) {
    io::check_output_path(a.log_std, {a.wav});
    MESHNN_CHECK_AS(InvalidArgument, a.log_std != a.out, "--log-std and --out are the same file");
  }
  MESHNN_CHECK_AS(InvalidArgument, a.stream || a.push_samples == 0,
                  "--push-samples is for --stream");
  const io::WavAudio in = io::read_wav(a.wav);
  const int64_t S = in.samples.dim(1);  // (C, S)
  MESHNN_CHECK_AS(ShapeError, S >= 1, a.wav, ": no samples");
  // The bound of every route (serve's /encode too): one batch item per channel.
  MESHNN_CHECK_AS(ShapeError, in.samples.dim(0) <= kMaxBatchItems, a.wav, ": ", in.samples.dim(0),
                  " channels; at most ", kMaxBatchItems, " (one batch item each)");
  const Tensor wave = io::channels_as_batch(in.samples);  // (B, 1, S): a batch item per channel
  const auto t_load = std::chrono::steady_clock::now();
  AudioModelOptions options;
  options.precision = StagePrecision::parse(a.precision);
  options.encoder_only = true;
  const AudioModel model = AudioModel::load(a.checkpoint, options);
  const double load_s = seconds_since(t_load);
  const int sample_rate = model.output_spec().sample_rate;
  MESHNN_CHECK_AS(InvalidArgument, in.sample_rate == sample_rate, a.wav, ": ", in.sample_rate,
                  " Hz; the model takes ", sample_rate, " Hz (resample first)");
  RunOptions run;
  run.mesh = a.mesh;
  run.backend = parse_backend(a.backend);
  run.threads = a.threads;
  Tensor log_std;
  const auto t1 = std::chrono::steady_clock::now();
  Tensor mean = a.stream ? encode_streamed(model, wave, run, a.push_samples ? a.push_samples : 8000,
                                           &log_std, a.quiet)
                         : model.encode(wave, run, a.log_std.empty() ? nullptr : &log_std);
  const double secs = seconds_since(t1);
  if (a.normalize) mean = model.normalize_latents(mean);
  // One shot: every MPI rank holds the whole result; streamed: the last pipeline rank.
  if (a.stream ? mean.dim(2) > 0 : process_rank(run.backend) == 0) {
    io::save_npy(a.out, mean);
    if (!a.log_std.empty()) io::save_npy(a.log_std, log_std);
    if (!a.quiet)
      std::printf(
          "wrote %s: latents %s%s; load %.2f s, encode %.2f s (real-time factor %.3f), total "
          "%.2f s\n",
          a.out.c_str(), shape_str(mean.shape()).c_str(), a.normalize ? " (normalised)" : "",
          load_s, secs, secs / (static_cast<double>(S) / sample_rate), seconds_since(t0));
  }
  if (run.backend == Backend::mpi) finalize_backends();
}

const Registrar reg("audio-encode", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  const std::vector<AudioModelEntry> encoders =
      registered_models([](const AudioModelEntry& e) { return e.has_encoder; });
  auto* cmd = app.add_subcommand("audio-encode",
                                 "Encode a WAV to a model's latents (.npy, one item per channel) "
                                 "with a registered model that has an encoder (" +
                                     model_names(encoders) + ")");
  cmd->add_option("--checkpoint", args->checkpoint,
                  "a model with an encoder: " + checkpoint_help(encoders))
      ->required()
      ->check(CLI::ExistingPath);  // a file is refused by the loader, naming what it expects
  cmd->add_option("--wav", args->wav, "input .wav at the model's rate; stereo = 2 items")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "output .npy: the posterior mode (B, C, ⌈samples / hop⌉)")
      ->required();
  cmd->add_option("--log-std", args->log_std, "also write the posterior log std (.npy)");
  cmd->add_flag("--normalize", args->normalize,
                "apply the pipeline's (z − latents_mean) / latents_std to the mode (latents for "
                "the DiT); encode itself applies no statistics");
  cmd->add_option("--precision", args->precision, "fp32 | bf16 | bf16x2 | bf16x3")
      ->capture_default_str();
  cmd->add_option("--mesh", args->mesh,
                  "device mesh RxC: the columns split the channels (1x2 = one stereo channel per "
                  "device), the rows time; auto = one device")
      ->capture_default_str();
  cmd->add_option("--backend", args->backend, "local (threads) | mpi (launch under mpiexec)")
      ->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 0, max_threads(),
                 "OpenMP threads per device (0 = cores / devices)");
  cmd->add_flag("--stream", args->stream,
                "encode as a stream: samples pushed --push-samples at a time, frames out as they "
                "become final (equal to one shot to f32 rounding); --mesh 1xN = a pipeline");
  add_int_option(cmd, "--push-samples", args->push_samples, int64_t{1}, int64_t{1} << 24,
                 "samples per push with --stream (default 8000)");
  cmd->add_flag("--quiet", args->quiet, "no summary output");
  cmd->add_flag("--allow-unknown-config", args->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
