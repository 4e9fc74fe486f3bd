// Progressive I/O for streaming decode: model input read frame by frame as it arrives, audio
// written as it is produced.
//
// Input (FrameSource): a frame is one time step of a model input, C float32 values:
//   mel:    C = num_mels, the column mel[:, t] of a (num_mels, T) spectrogram;
//   latent: C = channels · freq = 8 · 16 = 128, latent[:, t, :] of an LTX (8, T, 16) latent,
//           flattened in (channel, freq) order: value c · freq + f is latent[c, t, f].
// Sources:
//   - a .npy file, read along its time axis in blocks without loading it whole (time is not the
//     outer axis of a mel or latent, so a block of frames is one strided read per outer row);
//     float32 or float64 (converted to float32), any other dtype a ShapeError;
//   - raw float32 little-endian frames from a file descriptor (stdin for `--frames-from -`),
//     frame after frame, in the order above; the stream may end only at a frame boundary
//     (FormatError naming the byte count otherwise).
// Every value is checked finite (InvalidArgument naming the frame and the value).
//
// Output (AudioSink): samples (C, T) f32, channels first as everywhere (wav.h), appended as they
// become final (interleaved into frames on the way out):
//   - a WAV file (float32 or 16-bit PCM, the same choices and bytes as io::write_wav), grown in a
//     scratch file beside the target and renamed over it at close (open_wav_sink). The final file
//     is byte-identical to write_wav of all samples at once.
//   - raw interleaved PCM (s16le, or f32le) on a file descriptor (stdout for `--out -`), e.g.
//     `... --out - | aplay -f S16_LE -r 48000 -c 2`. s16 conversion (scale, rounding, clipping)
//     is the one of the 16-bit WAV.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "meshnn/core/tensor.h"
#include "meshnn/io/wav.h"

namespace meshnn::io {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Values per frame (C).
  virtual int64_t frame_size() const = 0;
  // Frames returned so far.
  virtual int64_t frames_read() const = 0;
  // The file name used in error messages ("<stdin>" for standard input).
  virtual const std::string& name() const = 0;

  // out ← (n, C) f32 with 1 ≤ n ≤ max_frames, or returns 0 at the end of the input (out is then
  // left as it was). A file source returns min(max_frames, frames left); a stream source blocks
  // until at least one whole frame has arrived and returns the whole frames already received, up
  // to max_frames (so a consumer pushes frames as soon as they exist). max_frames ≥ 1.
  virtual int64_t read(int64_t max_frames, Tensor& out) = 0;
};

// A .npy whose shape is outer × T × inner with T at `time_axis` (negative counts from the end):
// frame t is x[…, t, …] flattened in C order (outer index major). Reads blocks of about 1 MiB.
std::unique_ptr<FrameSource> open_npy_frames(const std::string& path, int time_axis);
// Mel spectrogram (num_mels, T) or (1, num_mels, T); num_mels > 0 is checked (ShapeError).
std::unique_ptr<FrameSource> open_mel_npy(const std::string& path, int64_t num_mels = 0);
// Raw float32 little-endian frames of `frame_size` values from `fd` (not closed). `name` is used
// in messages.
std::unique_ptr<FrameSource> open_raw_frames(int fd, int64_t frame_size,
                                             const std::string& name = "<stdin>");
// "-" = standard input; otherwise the file at `path` (opened and owned).
std::unique_ptr<FrameSource> open_raw_frames(const std::string& path, int64_t frame_size);

// frames (n, num_mels) → mel (1, num_mels, n), the vocoder's input layout.
Tensor frames_to_mel(const Tensor& frames);
// frames (n, channels · freq) → latent (1, channels, n, freq), the LTX decoder's input layout.
Tensor frames_to_latent(const Tensor& frames, int64_t channels = 8, int64_t freq = 16);

enum class RawPcmFormat { s16le, f32le };

class AudioSink {
 public:
  // A sink destroyed without close() (an error unwound past it) gives the output up: a WAV
  // target is left as it was, its scratch file removed; raw PCM already written stays written.
  virtual ~AudioSink() = default;
  virtual int channels() const = 0;
  virtual int sample_rate() const = 0;
  // Samples per channel written so far.
  virtual int64_t frames_written() const = 0;
  // samples: (C, T) f32, channels first, finite (InvalidArgument naming the first non-finite
  // value), C = channels(); T = 0 is allowed. Appended to the output before returning.
  virtual void write(const Tensor& samples) = 0;
  // Finishes the output (final WAV header). Idempotent; write() after close() is an error.
  virtual void close() = 0;
};

// WAV written progressively for `path` (symlinks followed). A regular or new target: the WAV grows
// in a scratch file beside it (".<name>.meshnn-tmp.<pid>.<n>"; its header is
// rewritten after every write, so it is a valid WAV of what was written so far) and is renamed
// over the target at close(), so a failing stream never destroys the file it was to replace. A
// FIFO or other non-seekable target gets the WAV at close() (a WAV header states its length up
// front, so it cannot be streamed before the end). The scratch file is removed when the sink is
// destroyed unclosed, and on SIGINT / SIGTERM in the CLI.
std::unique_ptr<AudioSink> open_wav_sink(const std::string& path, int channels, int sample_rate,
                                         WavFormat format = WavFormat::float32);
// Raw interleaved PCM written to `fd` (not closed); `name` is used in messages. A reader that
// closes the pipe makes write() throw BackendError (the process must ignore SIGPIPE to see it).
std::unique_ptr<AudioSink> open_raw_pcm_sink(int fd, int channels, int sample_rate,
                                             RawPcmFormat format = RawPcmFormat::s16le,
                                             const std::string& name = "<stdout>");
// A WAV written at positions into `fd` (not closed), which must be seekable and empty (e.g. a
// memfd): the bytes io::write_wav writes, complete at close(). For a server that answers WAV
// bodies from memory.
std::unique_ptr<AudioSink> open_wav_fd_sink(int fd, int channels, int sample_rate,
                                            WavFormat format = WavFormat::float32,
                                            const std::string& name = "<memory>");
// "-" → raw s16le PCM on standard output; anything else → open_wav_sink(out, …).
std::unique_ptr<AudioSink> open_audio_sink(const std::string& out, int channels, int sample_rate,
                                           WavFormat format = WavFormat::float32);

}  // namespace meshnn::io
