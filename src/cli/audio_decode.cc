// meshnn audio-decode: LTX-2.3 (or LTX-2) audio latent .npy + checkpoint → 48 kHz stereo .wav.
#include <cstdio>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "meshnn/audio.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string checkpoint, latent, out, mesh = "auto", backend = "local", precision = "fp32";
  int threads = 0;
  int64_t chunk_frames = 0;
  bool quiet = false;
};

void run(const Args& a) {
  const auto t0 = std::chrono::steady_clock::now();
  RunOptions run;
  run.mesh = a.mesh;
  run.backend = parse_backend(a.backend);
  run.threads = a.threads;
  const Precision precision = parse_precision(a.precision);
  Tensor latent = io::load_npy(a.latent);
  MESHNN_CHECK_AS(ShapeError, latent.dtype() == DType::f32 || latent.dtype() == DType::f64,
                  a.latent, ": latent must be float32 or float64, got ", dtype_name(latent.dtype()));
  if (latent.dtype() != DType::f32) latent = latent.to(DType::f32);
  if (latent.rank() == 3) latent = latent.reshape({1, latent.dim(0), latent.dim(1), latent.dim(2)});
  MESHNN_CHECK_AS(ShapeError, latent.rank() == 4 && latent.dim(0) == 1, a.latent,
                  ": expected one latent (1, 8, T, 16) or (8, T, 16), got ", shape_str(latent.shape()));
  MESHNN_CHECK_AS(InvalidArgument, a.chunk_frames == 0 || a.mesh == "auto" || a.mesh == "1x1",
                  "--chunk-frames needs --mesh 1x1 (got ", a.mesh,
                  "): chunked decode runs on one device; drop --chunk-frames to shard over the mesh");
  const auto t_load = std::chrono::steady_clock::now();
  const LtxAudioDecoder decoder = LtxAudioDecoder::load(a.checkpoint, precision);
  const double load_s = seconds_since(t_load);
  const bool writer = process_rank(run.backend) == 0;
  Progress progress(a.quiet || !writer);
  run.progress = progress.fn();
  const auto t1 = std::chrono::steady_clock::now();
  const Tensor wave = a.chunk_frames > 0 ? decoder.decode_chunked(latent, a.chunk_frames, run)
                                         : decoder.decode(latent, run);
  const double secs = seconds_since(t1);
  if (writer) {
    io::write_wav(a.out, interleave_for_wav(wave), decoder.sample_rate());
    const double audio_s = static_cast<double>(wave.dim(2)) / decoder.sample_rate();
    if (!a.quiet)
      std::printf("wrote %s: %.2f s of %d Hz stereo; load %.2f s, decode %.2f s (real-time factor "
                  "%.3f), total %.2f s\n",
                  a.out.c_str(), audio_s, decoder.sample_rate(), load_s, secs, secs / audio_s,
                  seconds_since(t0));
  }
  if (run.backend == Backend::mpi) finalize_backends();
}

const Registrar reg("audio-decode", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("audio-decode", "Decode an LTX-2.3 audio latent (.npy) to a 48 kHz stereo WAV");
  cmd->add_option("--checkpoint", args->checkpoint, "LTX checkpoint (.safetensors with `config` metadata)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--latent", args->latent, "latent .npy, (1, 8, T, 16) or (8, T, 16)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", args->out, "output .wav (float32)")->required();
  cmd->add_option("--mesh", args->mesh,
                  "device mesh RxC (time is split over every axis > 1), or auto: one single-thread "
                  "device per core on the local backend")->capture_default_str();
  cmd->add_option("--backend", args->backend, "local (threads) | mpi (launch under mpiexec)")->capture_default_str();
  cmd->add_option("--precision", args->precision, "fp32 | bf16 | bf16x2 | bf16x3")->capture_default_str();
  cmd->add_option("--threads", args->threads, "OpenMP threads per device (0 = cores / devices)");
  cmd->add_option("--chunk-frames", args->chunk_frames,
                  "decode in chunks of N latent frames (25 per second) with exact context: memory "
                  "bounded by N, output equal to one shot to f32 rounding (max |diff| ~1e-6); about "
                  "1.2 s of context is recomputed per chunk, so N >= 50 keeps the extra compute "
                  "under ~1.6x; one device; 0 = one shot")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet", args->quiet, "no progress or summary output");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
