// meshnn audio-decode: latents (.npy) + a latent decoder the AudioModel registry knows → .wav, one
// channel per batch item and output channel at the model's rate (one shot on any mesh, chunked
// where the model chunks, or --stream). Nothing here names a model: the input's layout, the
// checks before the load and the chunking come from AudioModel.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/numeric_option.h"
#include "cli/stream_cli.h"
#include "cli/stream_frame.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/config_policy.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/stream_io.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string checkpoint, latent, out, mesh = "auto", backend = "local", precision = "fp32";
  int threads = 0;
  int64_t chunk_frames = 0;
  bool chunk_given = false;  // --chunk-frames on the command line (else the memory rule decides)
  bool allow_unused = false, quiet = false, latents_normalized = false;
  bool allow_unknown_config = false;
  StreamArgs st;
};

// One rule for the input of an MPI stream: every rank reads it whole, so it must be a regular
// file (stdin and FIFOs would be split between the ranks: wrong, half-length audio). As the
// one-shot decode, the mesh must match the launch (a 1x1 stream under several ranks would have
// every rank write the same output).
void check_mpi_stream(const Args& a) {
  check_input_every_rank_reads(a.st.frames_from.empty() ? a.latent : a.st.frames_from,
                               a.st.frames_from.empty() ? "--latent" : "--frames-from");
  const MeshConfig mc = parse_mesh(a.mesh == "auto" ? "1x1" : a.mesh);
  const int world = process_count(Backend::mpi);
  MESHNN_CHECK_AS(InvalidArgument, world == mc.rows * mc.cols, "--backend mpi --mesh ", mc.rows,
                  "x", mc.cols, " needs ", mc.rows * mc.cols, " processes but the launch has ",
                  world, " (mpiexec -n ", mc.rows * mc.cols, ")");
}

// --stream: the frames of cli/stream_frame.h (items × the input's fixed dims, item-major), the
// item count from the .npy's shape or --items for raw frames; samples written as they are final.
void run_stream_mode(const Args& a, const AudioModel& model) {
  MESHNN_CHECK_AS(InvalidArgument, !a.chunk_given,
                  "--chunk-frames is for the one-shot decode; with --stream use --push-frames");
  const Backend backend = parse_backend(a.backend);
  if (backend == Backend::mpi) check_mpi_stream(a);
  StreamOptions o;
  o.mesh = a.mesh == "auto" ? "1x1" : a.mesh;
  o.backend = backend;
  o.threads = a.threads;
  o.push_frames = a.st.push_frames;
  AudioStream stream = model.stream(o);
  const AudioIoSpec& in = model.input_spec();
  StreamFrame frame = stream_frame(in, a.st.items, "--items");
  // frame t of the .npy = x[…, t, …] in C order: T's axis counted from the end of the layout.
  const int time_axis = in.time_axis - static_cast<int>(in.shape.size());
  auto source = open_stream_source(
      a.st.frames_from, a.latent, frame.size(),
      [time_axis](const std::string& p) { return io::open_npy_frames(p, time_axis); });
  if (a.st.frames_from.empty()) {
    const int64_t per_item = frame.per_item;
    MESHNN_CHECK_AS(ShapeError, source->frame_size() % per_item == 0, source->name(),
                    ": a latent frame of ", source->frame_size(), " values; expected items·",
                    per_item);
    const int64_t items = source->frame_size() / per_item;
    MESHNN_CHECK_AS(InvalidArgument, !a.st.items_given || a.st.items == items, "--items ",
                    a.st.items, ": ", source->name(), " holds ", items, " item(s)");
    frame = stream_frame(in, items, source->name() + " (batch items)");
  }
  const bool denorm = a.latents_normalized;
  const int64_t channels = frame.items * std::max<int64_t>(1, model.output_spec().shape[1]);
  StreamRun r = stream_run(
      stream, static_cast<int>(channels),
      [frame, denorm, &model](const Tensor& f) {
        const Tensor z = frame.to_input(f);  // (n, items·C·F) → (items, C, n[, F])
        return denorm ? model.denormalize_latents(z) : z;
      },
      a.quiet);
  // (B, C, m) → one WAV channel per item and output channel.
  r.push = [&stream](const Tensor& z) { return StreamFrame::as_planar(stream.push(z)); };
  r.flush = [&stream] { return StreamFrame::as_planar(stream.flush()); };
  run_stream(r, *source, a.st.push_frames, a.out);
  if (backend == Backend::mpi) finalize_backends();
}

RunOptions run_options(const Args& a) {
  RunOptions run;
  run.mesh = a.mesh;
  run.backend = parse_backend(a.backend);
  run.threads = a.threads;
  run.chunk_frames = a.chunk_given ? a.chunk_frames : -1;
  return run;
}

AudioModelOptions load_options(const Args& a) {
  AudioModelOptions options;
  options.precision = StagePrecision::parse(a.precision);
  options.decoder_only = true;
  options.allow_unused = a.allow_unused;
  return options;
}

// The latents as run() takes them: the .npy's (…) with the batch axis added when it lacks one;
// everything that can be checked without weights is checked before the load.
Tensor read_latent(const Args& a, const RunOptions& run) {
  check_not_streaming_options(a.st, a.out);
  MESHNN_CHECK_AS(InvalidArgument, !a.latent.empty(),
                  "--latent is required (or --stream with --frames-from)");
  MESHNN_CHECK_AS(
      InvalidArgument, !a.chunk_given || a.chunk_frames == 0 || a.mesh == "auto" || a.mesh == "1x1",
      "--chunk-frames needs --mesh 1x1 (got ", a.mesh,
      "): chunked decode runs on one device; drop --chunk-frames to shard over the mesh");
  Tensor z = float_input(io::load_npy(a.latent), a.latent);
  AudioModel::check_input(a.checkpoint, z.shape(), run, load_options(a));
  return z;
}

// The WAV and the summary: one channel per item and output channel (a stereo model: two).
void write_output(const Args& a, const Tensor& wave, int sample_rate, double load_s, double secs,
                  std::chrono::steady_clock::time_point t0) {
  const int64_t channels = wave.dim(0) * wave.dim(1), S = wave.dim(2);
  io::write_wav(a.out, wav_samples(wave.reshape({1, channels, S})), sample_rate);
  const double audio_s = static_cast<double>(S) / sample_rate;
  if (!a.quiet)
    std::printf(
        "wrote %s: %.2f s of %d Hz audio, %lld channel(s); load %.2f s, decode %.2f s "
        "(real-time factor %.3f), total %.2f s\n",
        a.out.c_str(), audio_s, sample_rate, static_cast<long long>(channels), load_s, secs,
        secs / audio_s, seconds_since(t0));
}

void run(const Args& a) {
  const AllowUnknownConfig lenient(a.allow_unknown_config);  // every config read below
  const auto t0 = std::chrono::steady_clock::now();
  RunOptions run = run_options(a);
  Tensor z;
  if (!a.st.stream) z = read_latent(a, run);
  const auto t_load = std::chrono::steady_clock::now();
  const AudioModel model = AudioModel::load(a.checkpoint, load_options(a));
  const double load_s = seconds_since(t_load);
  const AudioIoSpec& in = model.input_spec();
  MESHNN_CHECK_AS(InvalidArgument, in.what == "latent", a.checkpoint, " is the ",
                  model.description(), ": it takes ", in.what, " ", in.layout(),
                  in.what == "mel" ? ", not latents; use `meshnn vocode`" : ", not latents");
  MESHNN_CHECK_AS(InvalidArgument, !a.latents_normalized || model.has_latent_statistics(),
                  "--latents-normalized: the ", model.description(), " has no latent statistics");
  if (a.st.stream) return run_stream_mode(a, model);
  if (z.rank() + 1 == static_cast<int64_t>(in.shape.size())) {  // no batch axis: one item
    Shape s = z.shape();
    s.insert(s.begin(), 1);
    z = z.reshape(s);
  }
  MESHNN_CHECK_AS(
      ShapeError, z.rank() == static_cast<int64_t>(in.shape.size()) && z.dim(0) <= kMaxBatchItems,
      a.latent, ": expected ", in.layout(), " latents (or without the batch axis), B ≤ ",
      kMaxBatchItems, ", got ", shape_str(z.shape()));
  const int64_t chunk = model.chunk_frames(z.dim(in.time_axis), run);
  if (chunk > 0 && !a.chunk_given && !a.quiet)
    std::fprintf(stderr,
                 "meshnn: latent of %lld frames (%.1f s): decoding in chunks of %lld frames to "
                 "bound memory (--chunk-frames 0 forces one shot)\n",
                 static_cast<long long>(z.dim(in.time_axis)),
                 z.dim(in.time_axis) / in.frames_per_second, static_cast<long long>(chunk));
  if (a.latents_normalized) z = model.denormalize_latents(z);
  const bool writer = process_rank(run.backend) == 0;
  Progress progress(a.quiet || !writer);
  run.progress = progress.fn();
  const auto t1 = std::chrono::steady_clock::now();
  const Tensor wave = model.run(z, run);  // (B, C, S)
  const double secs = seconds_since(t1);
  if (writer) write_output(a, wave, model.output_spec().sample_rate, load_s, secs, t0);
  if (run.backend == Backend::mpi) finalize_backends();
}

const Registrar reg("audio-decode", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  const std::vector<AudioModelEntry> decoders =
      registered_models([](const AudioModelEntry& e) { return e.input == "latent"; });
  auto* cmd = app.add_subcommand(
      "audio-decode", "Decode audio latents (.npy) to a WAV with a registered latent model (" +
                          model_names(decoders) +
                          "): one channel per batch item and output channel, at the model's rate");
  cmd->add_option("--checkpoint", args->checkpoint, checkpoint_help(decoders))
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--latent", args->latent,
                  "latent .npy in the model's layout, with or without its batch axis: e.g. "
                  "(1, 8, T, 16) or (8, T, 16); (B, C, T) or (C, T), C = the model's latent "
                  "channels, B ≤ 64 items")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out,
                  "output .wav (float32); with --stream, - writes raw s16le PCM to stdout")
      ->required();
  cmd->add_option("--mesh", args->mesh,
                  "device mesh RxC (as the model splits its work: time over every axis > 1, or the "
                  "columns split the batch items, e.g. 1x2 = one stereo channel per device, and "
                  "the rows time; docs/mesh.md), or auto: one device with --threads OpenMP threads "
                  "(all cores by default; measured fastest); with --stream 1x1 or a 1xN pipeline")
      ->capture_default_str();
  cmd->add_option("--backend", args->backend, "local (threads) | mpi (launch under mpiexec)")
      ->capture_default_str();
  cmd->add_option("--precision", args->precision, kPrecisionHelp)->capture_default_str();
  add_int_option(cmd, "--threads", args->threads, 0, max_threads(),
                 "OpenMP threads per device (0 = cores / devices)");
  add_int_option(cmd, "--chunk-frames", args->chunk_frames, int64_t{0}, kMaxChunkFrames,
                 "decode in chunks of N latent frames (25 per second) with exact context: memory "
                 "bounded by N, output within 1.25e-6 (max |diff|, measured) of one shot, f32 "
                 "rounding; about 1.2 s of context is recomputed per chunk, so N >= 50 keeps the "
                 "extra compute under ~1.6x; 1x1 mesh only; 0 = one shot. Default: one shot up to "
                 "250 frames (10 s), chunks of 125 above (with --mesh auto or 1x1)")
      ->each([args](const std::string&) { args->chunk_given = true; });
  cmd->add_flag("--allow-unused-tensors", args->allow_unused,
                "accept tensors under audio_vae. / vocoder. that no layer uses (a warning instead "
                "of an error)");
  cmd->add_flag("--latents-normalized", args->latents_normalized,
                "for a model with latent statistics: the latents are normalised (as its DiT "
                "produces them): apply z·latents_std + latents_mean first (decode itself applies "
                "no statistics)");
  add_stream_options(cmd, args->st, 8, "latent",
                     "--items × the input's fixed dims (e.g. 8·16 for (1, 8, T, 16), C for "
                     "(B, C, T)) values, item-major, channel-major within an item (stereo as two "
                     "items: --items 2)");
  add_items_option(cmd, args->st);
  cmd->add_flag("--quiet", args->quiet, "no progress or summary output");
  cmd->add_flag("--allow-unknown-config", args->allow_unknown_config,
                "accept config fields meshnn does not know (logged and ignored)");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
