#include "cli/audio_common.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>

namespace meshnn::cli {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Progress::Progress(bool quiet) : quiet_(quiet), tty_(isatty(2)), t0_(std::chrono::steady_clock::now()) {}

void Progress::stage(int done, int total, const char* name) {
  if (quiet_) return;
  const double t = seconds_since(t0_);
  if (tty_) {
    const int width = 30, fill = width * done / total;
    std::fprintf(stderr, "\r[%.*s%*s] %d/%d %-22s %6.1f s", fill, "##############################",
                 width - fill, "", done, total, name, t);
    if (done == total) std::fputc('\n', stderr);
  } else {
    std::fprintf(stderr, "meshnn: stage %d/%d done: %s (%.1f s)\n", done, total, name, t);
  }
  std::fflush(stderr);
}

std::vector<int> time_axes(const Device& d) {
  std::vector<int> axes;
  for (int a = 0; a < 2; ++a)
    if (d.axis_size(a) > 1) axes.push_back(a);
  return axes;
}

DecodeResult decode_on_mesh(const MeshConfig& mesh,
                            const std::function<std::unique_ptr<models::LtxAudioDecoder>()>& make,
                            const Tensor& latent, bool quiet, int64_t chunk_frames) {
  MESHNN_CHECK_AS(InvalidArgument, chunk_frames >= 0, "chunk frames must be >= 0 (0 = one shot), got ",
                  chunk_frames);
  MESHNN_CHECK_AS(InvalidArgument, chunk_frames == 0 || mesh.rows * mesh.cols == 1,
                  "chunked decode runs on one device: use --chunk-frames with --mesh 1x1 (got ", mesh.rows,
                  "x", mesh.cols, "), or drop --chunk-frames to shard the time axis over the mesh");
  DecodeResult r;
  std::mutex mu;
  run_spmd(mesh, [&](Device& d) {
    auto dec = make();
    const std::vector<int> axes = time_axes(d);
    TimeShard ts = axes.empty() ? TimeShard() : TimeShard(d, axes);
    Progress progress(quiet || d.rank() != 0);
    d.ccl().barrier();
    const auto t0 = std::chrono::steady_clock::now();
    const models::ProgressFn report = [&](int i, int n, const char* s) { progress.stage(i, n, s); };
    Tensor y = chunk_frames > 0 ? dec->decode_chunked(latent, chunk_frames, report)
                                : dec->decode(latent, ts, report);
    d.ccl().barrier();
    const double secs = seconds_since(t0);
    if (d.rank() == 0) {
      std::lock_guard<std::mutex> lock(mu);
      r.wave = y;
      r.sample_rate = dec->sample_rate();
      r.seconds = secs;
      r.is_writer = true;
    }
  });
  return r;
}

}  // namespace meshnn::cli
