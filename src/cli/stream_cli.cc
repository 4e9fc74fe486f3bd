#include "cli/stream_cli.h"

#include <sys/stat.h>

#include <csignal>
#include <cstdio>

#include "cli/audio_common.h"
#include "cli/batch_limit.h"
#include "cli/numeric_option.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"

namespace meshnn::cli {

void add_stream_options(CLI::App* cmd, StreamArgs& s, int64_t push_frames, const std::string& input,
                        const std::string& frame) {
  s.push_frames = push_frames;
  cmd->add_flag("--stream", s.stream,
                "push the " + input +
                    " frame by frame and write samples as they become final (equal to one shot "
                    "to f32 rounding); --mesh 1xN runs an N-stage pipeline");
  cmd->add_option("--frames-from", s.frames_from,
                  "with --stream: raw float32 little-endian " + input + " frames (" + frame +
                      " each) from this file, - = stdin");
  add_int_option(cmd, "--push-frames", s.push_frames, int64_t{1}, kMaxPushFrames,
                 "with --stream: " + input + " frames per push (at most)")
      ->capture_default_str()
      ->each([&s](const std::string&) { s.push_frames_given = true; });
}

void add_items_option(CLI::App* cmd, StreamArgs& s) {
  add_int_option(cmd, "--items", s.items, int64_t{1}, kMaxBatchItems,
                 "with --stream: batch items per frame (a model that decodes stereo as two items "
                 "takes --items 2: frames of 2·C values, item 0 first); a .npy input gives its "
                 "own")
      ->capture_default_str()
      ->each([&s](const std::string&) { s.items_given = true; });
}

void check_not_streaming_options(const StreamArgs& s, const std::string& out) {
  MESHNN_CHECK_AS(InvalidArgument,
                  s.frames_from.empty() && out != "-" && !s.push_frames_given && !s.items_given,
                  "--frames-from, --push-frames, --items and --out - need --stream");
}

void check_input_every_rank_reads(const std::string& path, const std::string& option) {
  MESHNN_CHECK_AS(InvalidArgument, path != "-", option,
                  " - reads stdin, which only one MPI rank has; give a regular file");
  struct stat st {};
  MESHNN_CHECK_AS(InvalidArgument, ::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode), option,
                  " ", path,
                  ": under --backend mpi every rank reads the input whole, so it must be a regular "
                  "file (a FIFO or device would give each rank a different part)");
}

std::unique_ptr<io::FrameSource> open_stream_source(
    const std::string& frames_from, const std::string& npy, int64_t frame_size,
    const std::function<std::unique_ptr<io::FrameSource>(const std::string&)>& open_npy) {
  MESHNN_CHECK_AS(InvalidArgument, frames_from.empty() != npy.empty(),
                  "--stream reads its input from exactly one of the .npy option or --frames-from");
  if (!frames_from.empty()) return io::open_raw_frames(frames_from, frame_size);
  return open_npy(npy);
}

StreamRun stream_run(AudioStream& stream, int channels,
                     std::function<Tensor(const Tensor&)> to_input, bool quiet) {
  StreamRun r;
  r.to_input = std::move(to_input);
  r.push = [&stream](const Tensor& x) { return stream.push(x); };
  r.flush = [&stream] { return stream.flush(); };
  r.sample_rate = stream.sample_rate();
  r.channels = channels;
  r.lookahead_frames = stream.lookahead_frames();
  r.lookahead_ms = stream.lookahead_ms();
  r.writes_output = stream.returns_output();
  r.quiet = quiet;
  return r;
}

double run_stream(const StreamRun& run, io::FrameSource& source, int64_t push_frames,
                  const std::string& out) {
  MESHNN_CHECK_AS(InvalidArgument, push_frames >= 1, "--push-frames must be ≥ 1, got ",
                  push_frames);
  // The output is opened only once there are samples to write (or at the end of a good input
  // with none): an unreadable input or a bad first frame never touches it. A WAV grows beside its
  // target and is renamed over it when the stream ends well (io::open_wav_sink).
  std::unique_ptr<io::AudioSink> sink;
  auto open_sink = [&] {
    if (sink || !run.writes_output) return;
    // A reader that goes away (`| head -c`) must surface as an error from write(), not kill us.
    if (out == "-") std::signal(SIGPIPE, SIG_IGN);
    sink = io::open_audio_sink(out, run.channels, run.sample_rate);
  };
  const bool report = !run.quiet && run.writes_output;
  if (report)
    std::fprintf(stderr, "streaming: look-ahead %lld frames (%.1f ms); pushes of up to %lld\n",
                 static_cast<long long>(run.lookahead_frames), run.lookahead_ms,
                 static_cast<long long>(push_frames));
  using clock = std::chrono::steady_clock;
  clock::time_point first_frame{}, first_audio{};
  bool have_frame = false, have_audio = false;
  double compute_s = 0;
  auto write = [&](const Tensor& y) {
    // A non-finite sample is the model's fault, reported before anything reaches the output.
    check_model_output(y, "the stream",
                       detail::concat("the push ending at input frame ", source.frames_read()));
    if (!run.writes_output || y.dim(2) == 0) return;
    open_sink();
    if (!have_audio) {
      first_audio = clock::now();
      have_audio = true;
    }
    sink->write(wav_samples(y));
  };
  Tensor frames;
  while (source.read(push_frames, frames) > 0) {
    if (!have_frame) {
      first_frame = clock::now();
      have_frame = true;
    }
    const auto t0 = clock::now();
    const Tensor y = run.push(run.to_input(frames));
    compute_s += seconds_since(t0);
    write(y);
  }
  const auto t0 = clock::now();
  const Tensor tail = run.flush();
  compute_s += seconds_since(t0);
  write(tail);
  open_sink();  // a good input that gave no samples still gets its (empty) WAV
  double audio_s = 0;
  if (sink) {
    audio_s = static_cast<double>(sink->frames_written()) / run.sample_rate;
    sink->close();
  }
  if (report) {
    const double latency =
        have_audio ? std::chrono::duration<double>(first_audio - first_frame).count() : 0;
    std::fprintf(stderr,
                 "streamed %lld frames → %.2f s of audio to %s: first audio %.0f ms after the "
                 "first frame; compute %.2f s (real-time factor %.3f)\n",
                 static_cast<long long>(source.frames_read()), audio_s,
                 out == "-" ? "stdout" : out.c_str(), 1e3 * latency, compute_s,
                 audio_s > 0 ? compute_s / audio_s : 0.0);
  }
  return audio_s;
}

}  // namespace meshnn::cli
