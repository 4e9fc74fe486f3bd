// Streaming decode: input frames pushed a few at a time, audio returned as soon as it is final.
//
// The concatenation of every push() and the flush() equals the one-shot decode/vocode of the whole
// input (to f32 rounding: measured max |Δ| ≤ 4e-6 on outputs in [−1, 1]; docs/streaming.md), for
// any way of cutting the input, down to one frame per push. Each layer carries exactly the history
// its receptive field needs, so the work and memory per pushed frame stay constant however long
// the stream runs.
//
// Latency: the vocoders are non-causal (their convolutions pad both sides), so the samples of
// frame t are final only once `lookahead_frames()` more frames have arrived; flush() returns the
// rest. The mel-VAE of the LTX decoder is causal and adds none.
//
// Mesh: "1x1" runs the whole model on one device, on the calling thread. "1xN" is a pipeline: the
// model's layers are cut into N groups of about equal measured cost, group k runs on device k, and
// the activations pass from device to device through the collective layer. push() then hands the
// frames to the first device and returns the samples that have left the last one so far (it
// blocks only while the pipeline is full); flush() waits for the rest. A pipeline raises a
// stream's throughput where time-sharding a small chunk cannot; it does not lower the latency.
//
// Threads: one call at a time per stream. push(), flush() and reset() claim the stream for the
// call (meshnn/core/exclusive.h): a call from a second thread while one runs throws InUseError
// ("this stream is in use by another thread") and leaves the stream as it was; calls that take
// turns from several threads are safe. The counters (frames_pushed, samples_returned) are read
// without the claim. Any number of streams may run at once over one loaded model (they share its
// weights).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "meshnn/audio.h"
#include "meshnn/core/exclusive.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {

struct StreamOptions {
  std::string mesh = "1x1";          // "1x1", or "1xN" for an N-stage pipeline
  Backend backend = Backend::local;  // mpi: this process is one rank (stage) of an mpiexec launch
  int threads = 0;                   // OpenMP threads per device; 0 = cores / devices
  // Pipeline only: the frames per push the stages are balanced for (the cost of a layer does not
  // grow in proportion to the rows of a push, so a cut balanced for 8 frames is not for 32).
  // 0 = 32 mel frames (vocoders) or 8 latent frames (LTX decoder).
  int64_t push_frames = 0;
};

// What every stream does; StreamingVocoder and StreamingLtxDecoder open one over a model.
class AudioStream {
 public:
  ~AudioStream();
  AudioStream(AudioStream&&) noexcept;
  AudioStream& operator=(AudioStream&&) noexcept;

  // Each of push / flush / reset throws InUseError while another thread's call runs.
  // frames: the next n ≥ 0 frames in the model's input layout (below), f32, finite → (B, C, m)
  // the m ≥ 0 samples that became final.
  Tensor push(const Tensor& frames);
  // End of the input → the remaining samples. The stream is then ready for a new input.
  Tensor flush();
  // Drops the current input (pending frames and history) without producing its tail.
  void reset();

  int sample_rate() const;
  int64_t samples_per_frame() const;  // output samples per input frame (in the long run)
  int64_t lookahead_frames() const;   // frames an output sample waits for beyond its own
  double lookahead_ms() const;        // the same in milliseconds of input
  int64_t frames_pushed() const;      // since the last flush / reset
  int64_t samples_returned() const;   // since the last flush / reset
  std::string mesh() const;           // the mesh it runs on, e.g. "1x2"
  // Whether this process receives the samples: always on the local backend; on MPI only the
  // last stage's rank (the others return (B, C, 0) tensors).
  bool returns_output() const;

  struct Impl;

 protected:
  explicit AudioStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class StreamingVocoder : public AudioStream {
 public:
  // NVIDIA BigVGAN: push mel frames (B, num_mels, n) → (B, 1, m) samples at sample_rate().
  explicit StreamingVocoder(const BigVganVocoder& model, const StreamOptions& options = {});
  // The LTX vocoder (BigVGAN v2 + bandwidth extension for LTX-2.3, HiFi-GAN for LTX-2): push mel
  // frames (B, 2, n, 64) as the mel-VAE decodes them (stereo, time, mel bin) → (B, 2, m).
  explicit StreamingVocoder(const LtxAudioDecoder& model, const StreamOptions& options = {});
};

// LTX-2.3 / LTX-2 audio decode as a stream: push latent frames (B, 8, n, 16) → (B, 2, m) at 48
// kHz (24 kHz). The first latent frame yields 1 mel frame, every later one 4 (the decode's
// 4T − 3); frames and look-ahead count latent frames.
class StreamingLtxDecoder : public AudioStream {
 public:
  explicit StreamingLtxDecoder(const LtxAudioDecoder& model, const StreamOptions& options = {});
};

}  // namespace meshnn
