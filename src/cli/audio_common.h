// Shared pieces of the audio subcommands: timing, progress reporting, decode on a mesh.
#pragma once

#include <chrono>
#include <string>

#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"
#include "models/ltx_audio_decoder.h"

namespace meshnn::cli {

double seconds_since(std::chrono::steady_clock::time_point t0);

// Stage progress on stderr: a bar that redraws in place on a terminal, plain lines otherwise,
// nothing when quiet.
class Progress {
 public:
  explicit Progress(bool quiet);
  void stage(int done, int total, const char* name);

 private:
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point t0_;
};

// Loads the checkpoint on every device and decodes `latent` on the mesh (time split over both
// axes when both are > 1). Returns the waveform (B, samples, 2) on the device of rank 0 (every
// device holds it; the caller writes from rank 0 only) and the decode seconds (slowest device).
// chunk_frames > 0: bounded-memory chunked decode (LtxAudioDecoder::decode_chunked), 1x1 mesh only.
struct DecodeResult {
  Tensor wave;
  int sample_rate = 0;
  double seconds = 0;
  bool is_writer = false;  // this process holds rank 0 (always true on the local backend)
};
DecodeResult decode_on_mesh(const MeshConfig& mesh, const std::function<std::unique_ptr<models::LtxAudioDecoder>()>& make,
                            const Tensor& latent, bool quiet, int64_t chunk_frames = 0);

// Mesh time axes: the non-trivial axes in row-major order.
std::vector<int> time_axes(const Device& d);

}  // namespace meshnn::cli
