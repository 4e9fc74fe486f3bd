// The --stream mode of `vocode` and `audio-decode`: input frames read as they arrive (a .npy read
// frame by frame, or raw float32 frames on stdin), pushed into a stream in groups, the final
// samples written as they come (a WAV that grows, or raw PCM on stdout), and the first-audio
// latency and real-time factor reported on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "meshnn/audio_model.h"
#include "meshnn/core/tensor.h"
#include "meshnn/io/stream_io.h"

namespace meshnn::cli {

// The options every streaming command has.
struct StreamArgs {
  bool stream = false;
  std::string frames_from;  // raw float32 frames ("-" = stdin) instead of the .npy
  int64_t push_frames = 0;  // frames per push (at most), 1 … kMaxPushFrames
  bool push_frames_given = false;
  int64_t items = 1;  // batch items per frame (cli/stream_frame.h), --items
  bool items_given = false;
};

// Registers --stream, --frames-from and --push-frames (default `push_frames`); `input` names what
// is pushed ("mel", "latent"), `frame` what one raw frame holds.
void add_stream_options(CLI::App* cmd, StreamArgs& s, int64_t push_frames, const std::string& input,
                        const std::string& frame);
// Registers --items: the batch items of one stream frame (cli/stream_frame.h; 1 … 64, default 1).
// A .npy input gives its own item count; --items then must agree with it.
void add_items_option(CLI::App* cmd, StreamArgs& s);
// Without --stream: InvalidArgument when a stream-only option (--frames-from, --push-frames,
// --items, --out -) is used.
void check_not_streaming_options(const StreamArgs& s, const std::string& out);

struct StreamRun {
  // frames (n, C) from the source → the model's input layout (e.g. (1, num_mels, n)).
  std::function<Tensor(const Tensor&)> to_input;
  std::function<Tensor(const Tensor&)> push;  // model input → (1, channels, m) samples
  std::function<Tensor()> flush;
  int sample_rate = 0;
  int channels = 0;
  int64_t lookahead_frames = 0;
  double lookahead_ms = 0;
  bool writes_output = true;  // false on the MPI ranks that do not receive the samples
  bool quiet = false;
};

// The StreamRun of an open stream: push / flush / rate / look-ahead from it; frames (n, C) become
// its input through to_input; `channels` of output.
StreamRun stream_run(AudioStream& stream, int channels,
                     std::function<Tensor(const Tensor&)> to_input, bool quiet);

// Runs the stream over `source` in pushes of at most `push_frames` frames into `out` ("-" = raw
// s16le PCM on stdout, else a WAV written as it grows). Returns the seconds of audio written.
double run_stream(const StreamRun& run, io::FrameSource& source, int64_t push_frames,
                  const std::string& out);

// The input of an MPI stream is read by every rank: InvalidArgument unless `path` is a regular
// file ("-" = stdin, a FIFO or a device would hand each rank a different part of the input).
void check_input_every_rank_reads(const std::string& path, const std::string& option);

// The frame source of a stream command: `frames_from` ("-" = stdin, else a raw float32 file) when
// given, else the .npy at `npy` read by `open_npy`.
std::unique_ptr<io::FrameSource> open_stream_source(
    const std::string& frames_from, const std::string& npy, int64_t frame_size,
    const std::function<std::unique_ptr<io::FrameSource>(const std::string&)>& open_npy);

}  // namespace meshnn::cli
