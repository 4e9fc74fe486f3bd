// meshnn audio-decode: LTX-2.3 (or LTX-2) audio latent .npy + checkpoint → 48 kHz stereo .wav.
#include <algorithm>
#include <cstdio>

#include "cli/audio_common.h"
#include "cli/commands.h"
#include "cli/preflight.h"
#include "mesh/mpi_comm.h"
#include "meshnn/core/cpu.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/output.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/wav.h"

namespace meshnn::cli {
namespace {

struct Args {
  std::string checkpoint, latent, out, mesh = "auto", backend = "local", precision = "fp32";
  int threads = 0;
  int64_t chunk_frames = 0;
  bool chunk_given = false;  // --chunk-frames on the command line (else the memory rule decides)
  bool allow_unused = false, quiet = false;
};

// --mesh auto on the local backend: one single-thread device per core along time (measured on
// 2 cores: 1x2 with 1 thread each decodes 1.33x faster than 1x1 with 2 OpenMP threads, see
// docs/benchmarks.md), fewer devices when the latent is too short to split, 1x1 when chunking.
MeshConfig auto_mesh(int64_t latent_frames, bool chunked, int threads) {
  MeshConfig mc;
  if (chunked) {
    mc.threads_per_device = threads;
    return mc;
  }
  int n = std::max(1, available_cores());
  auto fits = [&](int k) {
    const int64_t rows = (latent_frames + k - 1) / k;
    return k == 1 || (rows >= models::LtxAudioDecoder::kMinFramesPerDevice && (k - 1) * rows < latent_frames);
  };
  while (n > 1 && !fits(n)) --n;
  mc.cols = n;
  mc.threads_per_device = threads > 0 ? threads : (n > 1 ? 1 : 0);
  return mc;
}

void run(const Args& a) {
  check_thread_count(a.threads, "--threads");
  io::check_output_path(a.out, {a.checkpoint, a.latent});
  const Precision precision = parse_precision(a.precision);
  const Backend backend = parse_backend(a.backend);
  MESHNN_CHECK(a.mesh != "auto" || backend == Backend::local,
               "--mesh auto is for the local backend; with --backend mpi give the mesh (RxC = ranks)");
  const io::SafetensorsFile file = io::SafetensorsFile::open(a.checkpoint);
  const Tensor latent = models::prepare_ltx_latent(io::load_npy(a.latent), a.latent);
  const int64_t chunk_frames =
      choose_chunk_frames(a.chunk_given, a.chunk_frames, latent.dim(2), a.mesh, a.quiet);
  MeshConfig mc;
  if (a.mesh == "auto") {
    mc = auto_mesh(latent.dim(2), chunk_frames > 0, a.threads);
  } else {
    mc = parse_mesh(a.mesh);
    mc.threads_per_device = a.threads;
  }
  mc.backend = backend;
  models::LtxAudioDecoder::check_mesh_fits(latent.dim(2), mc.rows * mc.cols);
  models::CheckpointCheckOptions check;
  check.allow_unused_audio_tensors = a.allow_unused;
  MESHNN_CHECK_AS(
      InvalidArgument, chunk_frames == 0 || mc.rows * mc.cols == 1,
      "--chunk-frames needs --mesh 1x1 (got ", a.mesh,
      "): chunked decode runs on one device; drop --chunk-frames to shard over the mesh");
  const auto t0 = std::chrono::steady_clock::now();
  DecodeResult r = decode_on_mesh(
      mc, [&] { return models::LtxAudioDecoder::load(file, precision, check); }, latent, a.quiet,
      chunk_frames);
  if (r.is_writer) {
    MESHNN_CHECK_AS(ShapeError, r.wave.dim(0) == 1, "batch of ", r.wave.dim(0),
                    " latents: write one WAV per latent (batch 1 expected)");
    io::write_wav(a.out, r.wave.reshape({r.wave.dim(1), r.wave.dim(2)}), r.sample_rate);
    const double audio_s = static_cast<double>(r.wave.dim(1)) / r.sample_rate;
    if (!a.quiet)
      std::printf("wrote %s: %.2f s of %d Hz stereo; decode %.2f s (real-time factor %.3f), total %.2f s\n",
                  a.out.c_str(), audio_s, r.sample_rate, r.seconds, r.seconds / audio_s, seconds_since(t0));
  }
  if (mc.backend == Backend::mpi) mesh_detail::mpi_finalize();
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
                  "bounded by N, output within 1.25e-6 (max |diff|, measured) of one shot, f32 "
                  "rounding; about 1.2 s of context is recomputed per chunk, so N >= 50 keeps the "
                  "extra compute under ~1.6x; 1x1 mesh only; 0 = one shot. Default: one shot up to "
                  "250 frames (10 s), chunks of 125 above (with --mesh auto or 1x1)")
      ->check(CLI::NonNegativeNumber)
      ->each([args](const std::string&) { args->chunk_given = true; });
  cmd->add_flag("--allow-unused-tensors", args->allow_unused,
                "accept tensors under audio_vae. / vocoder. that no layer uses (a warning instead "
                "of an error)");
  cmd->add_flag("--quiet", args->quiet, "no progress or summary output");
  cmd->callback([args] { run(*args); });
});

}  // namespace
}  // namespace meshnn::cli
