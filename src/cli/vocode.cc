// meshnn vocode: a registered model that takes a mel (AudioModel::catalog), run on a mel .npy or on
// a .wav (copy synthesis through the model's own mel front end, AudioModel::input_from_wave) →
// .wav. Nothing here names a model: the model, its input and its rate come from AudioModel.
#include <cstdio>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "cli/stream_cli.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string checkpoint, config, mel, wav, out, precision = "fp32", mesh = "1x1";
  int threads = 0;
  bool quiet = false, allow_unknown_config = false;
  StreamArgs st;
};

// The registered models that take a mel.
std::vector<AudioModelEntry> mel_models() {
  return registered_models([](const AudioModelEntry& e) { return e.input == "mel"; });
}

// The model at --checkpoint: when one registered model takes a mel, its own loader reads the path
// (its errors say what is wrong with it); else the first model that recognises the path, which
// must take a mel.
AudioModel load_vocoder(const Args& a) {
  AudioModelOptions options;
  options.precision = StagePrecision::parse(a.precision);
  options.config_path = a.config;
  const std::vector<AudioModelEntry> vocoders = mel_models();
  if (vocoders.size() == 1) options.model = vocoders[0].name;
  AudioModel model = AudioModel::load(a.checkpoint, options);
  const AudioIoSpec& in = model.input_spec();
  MESHNN_CHECK_AS(InvalidArgument, in.what == "mel", a.checkpoint, " is the ", model.description(),
                  ": it takes ", in.what, " ", in.layout(),
                  ", not a mel; use `meshnn audio-decode`");
  return model;
}

// --stream: mel frames pushed as they are read, samples written as they become final.
void run_stream_mode(const Args& a) {
  MESHNN_CHECK_AS(InvalidArgument, a.wav.empty(),
                  "--stream takes its mel from --mel or --frames-from (copy synthesis from --wav "
                  "is one-shot only)");
  const AudioModel model = load_vocoder(a);
  StreamOptions o;
  o.mesh = a.mesh == "auto" ? "1x1" : a.mesh;
  o.threads = a.threads;
  o.push_frames = a.st.push_frames;
  AudioStream stream = model.stream(o);
  const int64_t M = model.input_spec().shape[1];  // (B, num_mels, T)
  auto source = open_stream_source(a.st.frames_from, a.mel, M, [M](const std::string& path) {
    return io::open_mel_npy(path, M);
  });
  const int channels = static_cast<int>(model.output_spec().shape[1]);
  run_stream(stream_run(
                 stream, channels, [](const Tensor& f) { return io::frames_to_mel(f); }, a.quiet),
             *source, a.st.push_frames, a.out);
}

// The mel the model runs on: --wav through its mel front end, else the --mel .npy; (1, M, frames).
Tensor read_mel(const Args& a, const AudioModel& model) {
  const int sr = model.output_spec().sample_rate;
  Tensor mel;
  if (!a.wav.empty()) {
    io::WavAudio w = io::read_wav(a.wav);
    MESHNN_CHECK(w.sample_rate == sr, a.wav, ": sample rate ", w.sample_rate,
                 " Hz, the model expects ", sr, " Hz (resample it first)");
    MESHNN_CHECK_AS(ShapeError, w.samples.dim(0) == 1, a.wav, ": ", w.samples.dim(0),
                    " channels; the ", model.description(), " is mono (mix down first)");
    mel = model.input_from_wave(w.samples.reshape({w.samples.dim(1)}));
  } else {
    mel = float_input(io::load_npy(a.mel), a.mel);  // the same dtype rule as audio-decode
    if (mel.rank() == 2) mel = mel.reshape({1, mel.dim(0), mel.dim(1)});
  }
  MESHNN_CHECK_AS(ShapeError, mel.rank() == 3 && mel.dim(0) == 1,
                  "one mel (1, num_mels, frames) or (num_mels, frames) expected, got ",
                  shape_str(mel.shape()));
  return mel;
}

void run(const Args& a) {
  const AllowUnknownConfig lenient(a.allow_unknown_config);  // every config read below
  if (a.st.stream) return run_stream_mode(a);
  check_not_streaming_options(a.st, a.out);
  MESHNN_CHECK(a.mel.empty() != a.wav.empty(), "give exactly one of --mel or --wav");
  check_thread_count(a.threads, "--threads");
  const AudioModel model = load_vocoder(a);
  const int sr = model.output_spec().sample_rate;
  const Tensor mel = read_mel(a, model);
  RunOptions run;
  run.mesh = a.mesh;
  run.threads = a.threads;
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor y = model.run(mel, run);
  const double secs = seconds_since(t0);
  io::write_wav(a.out, wav_samples(y), sr);
  if (!a.quiet)
    std::printf("wrote %s: %.2f s at %d Hz; vocoder %.2f s\n", a.out.c_str(),
                static_cast<double>(y.dim(2)) / sr, sr, secs);
}

const Registrar reg("vocode", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  const std::vector<AudioModelEntry> vocoders = mel_models();
  auto* cmd = app.add_subcommand(
      "vocode", "Run a vocoder (a registered model that takes a mel: " + model_names(vocoders) +
                    ") on a mel (.npy) or a WAV");
  cmd->add_option("--checkpoint", args->checkpoint, checkpoint_help(vocoders))
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--config", args->config,
                  "the model's config.json (default: the folder's, the checkpoint's `config` "
                  "metadata, or the config.json beside it)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--mel", args->mel, "log-mel .npy, (num_mels, frames) or (1, num_mels, frames)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--wav", args->wav, "mono .wav at the model's rate (copy synthesis)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out,
                  "output .wav (float32); with --stream, - writes raw s16le PCM to stdout")
      ->required();
  cmd->add_option("--precision", args->precision,
                  "fp32 | bf16 | bf16x2 | bf16x3, auto (bf16 where the CPU has avx512_bf16, else "
                  "fp32) or vocoder=MODE (docs/precision.md)")
      ->capture_default_str();
  cmd->add_option("--mesh", args->mesh, "local device mesh RxC (time split over it), or auto")
      ->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 0, max_threads(),
                 "OpenMP threads per device (0 = cores / devices)");
  add_stream_options(cmd, args->st, 32, "mel", "num_mels values");
  cmd->add_flag("--quiet", args->quiet, "no summary output");
  cmd->add_flag("--allow-unknown-config", args->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
