// Streaming audio sinks of meshnn/io/stream_io.h: a WAV file finished by rename (or streamed
// into a FIFO / device), raw PCM to a descriptor, a WAV into a caller's seekable descriptor.
#include <fcntl.h>
#include <sndfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "io/file_util.h"
#include "meshnn/core/error.h"
#include "meshnn/io/output.h"
#include "meshnn/io/stream_io.h"
#include "ops/permute.h"

namespace meshnn::io {

namespace {

// ---- audio sinks ----------------------------------------------------------------------------

// libsndfile virtual I/O over a descriptor. Seekable: positioned writes (the WAV header is
// rewritten in place). Not seekable: sequential writes; only a seek to the current position works.
struct FdIo {
  int fd = -1;
  bool seekable = false;
  sf_count_t pos = 0;
  sf_count_t len = 0;
  int error = 0;  // errno of the first failed write
};

sf_count_t fdio_length(void* user) { return static_cast<FdIo*>(user)->len; }
sf_count_t fdio_seek(sf_count_t offset, int whence, void* user) {
  auto* f = static_cast<FdIo*>(user);
  const sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? f->pos : f->len;
  sf_count_t to;
  if (__builtin_add_overflow(base, offset, &to) || to < 0) return -1;
  if (!f->seekable && to != f->pos) return -1;
  f->pos = to;
  return to;
}
sf_count_t fdio_read(void*, sf_count_t, void*) { return 0; }  // write-only
sf_count_t fdio_write(const void* ptr, sf_count_t count, void* user) {
  auto* f = static_cast<FdIo*>(user);
  const auto* p = static_cast<const uint8_t*>(ptr);
  sf_count_t done = 0;
  while (done < count) {
    const size_t n = static_cast<size_t>(count - done);
    const ssize_t r = f->seekable ? ::pwrite(f->fd, p + done, n, static_cast<off_t>(f->pos))
                                  : ::write(f->fd, p + done, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (!f->error) f->error = errno;
      break;
    }
    done += r;
    f->pos += r;
    f->len = std::max(f->len, f->pos);
  }
  return done;
}
sf_count_t fdio_tell(void* user) { return static_cast<FdIo*>(user)->pos; }

// One libsndfile writer over an FdIo: the WAV and raw sinks differ only in the format word and in
// where the descriptor leads.
class SndSink : public AudioSink {
 public:
  int channels() const override { return channels_; }
  int sample_rate() const override { return rate_; }
  int64_t frames_written() const override { return frames_; }

  // samples: (C, T) f32, channels first
  void write(const Tensor& samples) override {
    MESHNN_CHECK(!closed_, name_, ": write after close");
    MESHNN_CHECK_AS(ShapeError,
                    samples.defined() && samples.rank() == 2 && samples.dim(0) == channels_, name_,
                    ": samples must be (", channels_, ", T), channels first, got ",
                    samples.defined() ? shape_str(samples.shape()) : "undefined");
    samples.check_dtype(DType::f32);
    const sf_count_t n = samples.dim(1);
    const float* p = samples.data<float>();
    for (int64_t i = 0; i < samples.numel(); ++i)
      MESHNN_CHECK(std::isfinite(p[i]), name_, ": non-finite sample ", p[i], " at sample ",
                   frames_ + i % n, ", channel ", i / n,
                   " (the model produced it; nothing was written)");
    if (n == 0) return;
    const Tensor frames = ops::interleave(samples);  // (T, C): the order of WAV and raw PCM
    const float* x = frames.data<float>();
    if (sf_writef_float(snd_, x, n) != n || io_.error)
      throw BackendError(detail::concat(name_, ": write failed after ", frames_, " samples: ",
                                        io_.error ? std::strerror(io_.error) : sf_strerror(snd_),
                                        io_.error == EPIPE ? " (the reader closed the pipe)" : ""));
    frames_ += n;
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    if (!snd_) return;
    const int rc = sf_close(snd_);
    snd_ = nullptr;
    if (rc != 0 || io_.error)
      throw BackendError(detail::concat(
          name_, ": close failed: ", io_.error ? std::strerror(io_.error) : sf_error_number(rc)));
    finish();
  }

  ~SndSink() override {
    if (!closed_) {
      try {
        close();
      } catch (...) {
      }
    }
  }

 protected:
  SndSink(std::string name, int channels, int rate)
      : name_(std::move(name)), channels_(channels), rate_(rate) {
    MESHNN_CHECK(channels >= 1 && channels <= 1024, name_, ": channel count ", channels,
                 " outside 1..1024");
    MESHNN_CHECK(rate > 0, name_, ": sample rate ", rate, " must be positive");
  }

  // Opens libsndfile over io_ (io_.fd set by the subclass).
  void open(int format, bool header_auto) {
    SF_VIRTUAL_IO vio{fdio_length, fdio_seek, fdio_read, fdio_write, fdio_tell};
    SF_INFO info{};
    info.samplerate = rate_;
    info.channels = channels_;
    info.format = format;
    snd_ = sf_open_virtual(&vio, SFM_WRITE, &info, &io_);
    if (!snd_)
      throw BackendError(
          detail::concat(name_, ": cannot start the audio stream: ",
                         io_.error ? std::strerror(io_.error) : sf_strerror(nullptr)));
    // The settings of io::write_wav (src/io/wav.cc), so that the bytes are the same: clip instead
    // of wrapping in 16-bit PCM; no PEAK chunk (it carries a timestamp).
    sf_command(snd_, SFC_SET_CLIPPING, nullptr, SF_TRUE);
    sf_command(snd_, SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
    // Rewrite the header after every write: a killed stream leaves a WAV that states what was
    // written (one ~44-byte positioned write per call).
    if (header_auto) sf_command(snd_, SFC_SET_UPDATE_HEADER_AUTO, nullptr, SF_TRUE);
  }

  // After sf_close: e.g. copy a spooled file to its target.
  virtual void finish() {}

  std::string name_;
  int channels_, rate_;
  FdIo io_;
  SNDFILE* snd_ = nullptr;
  int64_t frames_ = 0;
  bool closed_ = false;
};

// A regular (or new) target: the WAV grows in a scratch file beside it (readable as it grows),
// renamed over the target at close(); a sink given up (destroyed unclosed: an
// error unwound past it) removes the scratch file and leaves the target as it was. A target that
// is not a regular file (FIFO, pipe, device) is opened at close() and gets the spooled WAV.
class WavSink final : public SndSink {
 public:
  WavSink(const std::string& path, int channels, int rate, WavFormat format)
      : SndSink(path, channels, rate) {
    target_ = resolve_output_path(path);
    struct stat st {};
    const bool exists = ::stat(target_.c_str(), &st) == 0;
    MESHNN_CHECK(!exists || !S_ISDIR(st.st_mode), path, ": is a folder, not a file");
    regular_ = !exists || S_ISREG(st.st_mode);
    if (regular_) {
      if (exists) mode_ = st.st_mode & 07777;
      tmp_ = std::make_unique<TempFile>(temp_path_beside(target_));
      out_.fd = ::open(tmp_->path().c_str(), O_WRONLY | O_CLOEXEC | O_CREAT | O_EXCL, 0666);
      if (out_.fd < 0) {
        const int err = errno;
        tmp_->release();  // not created: nothing to remove
        throw BackendError(
            detail::concat(path, ": cannot create ", tmp_->path(), ": ", std::strerror(err)));
      }
      io_.fd = out_.fd;
    } else {
      // Spool to an unlinked scratch file; the target is opened only at close(), so a failed
      // stream never opens (nor blocks on) it.
      std::string tmpl = (std::filesystem::temp_directory_path() / "meshnn_wav_XXXXXX").string();
      spool_.fd = ::mkstemp(tmpl.data());
      if (spool_.fd < 0)
        throw BackendError(
            detail::concat(path, ": cannot create a scratch file: ", std::strerror(errno)));
      ::unlink(tmpl.c_str());
      io_.fd = spool_.fd;
    }
    io_.seekable = true;
    open(SF_FORMAT_WAV | (format == WavFormat::pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT),
         regular_);
  }
  // Given up unless closed: the scratch file goes (TempFile), the target is untouched.
  ~WavSink() override {
    abandon_ = true;
    if (snd_) sf_close(snd_);
    snd_ = nullptr;
    closed_ = true;
  }

 private:
  void finish() override {
    if (abandon_) return;
    if (regular_) {
      ::close(out_.fd);
      out_.fd = -1;
      if (mode_ >= 0) ::chmod(tmp_->path().c_str(), static_cast<mode_t>(mode_));
      if (std::rename(tmp_->path().c_str(), target_.c_str()) != 0)
        throw BackendError(
            detail::concat(name_, ": cannot rename the finished stream: ", std::strerror(errno)));
      tmp_->release();
      return;
    }
    out_.fd = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (out_.fd < 0)
      throw BackendError(
          detail::concat(name_, ": cannot open for writing: ", std::strerror(errno)));
    std::vector<uint8_t> buf(size_t{1} << 20);
    for (off_t off = 0;;) {
      const ssize_t r = ::pread(spool_.fd, buf.data(), buf.size(), off);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0)
        throw BackendError(detail::concat(name_, ": scratch read failed: ", std::strerror(errno)));
      if (r == 0) break;
      write_all(out_.fd, buf.data(), static_cast<size_t>(r), name_);
      off += r;
    }
  }

  std::string target_;
  bool regular_ = true, abandon_ = false;
  int mode_ = -1;  // the replaced file's permission bits
  std::unique_ptr<TempFile> tmp_;
  Fd out_, spool_;
};

// A sink into a descriptor the caller owns: raw PCM to a pipe (sequential), or a WAV into a
// seekable memory file (the bytes of io::write_wav, header finished at close()).
class FdSink final : public SndSink {
 public:
  FdSink(int fd, bool seekable, int sf_format, int channels, int rate, const std::string& name)
      : SndSink(name, channels, rate) {
    io_.fd = fd;
    io_.seekable = seekable;
    open(sf_format, false);
  }
};

}  // namespace

std::unique_ptr<AudioSink> open_wav_sink(const std::string& path, int channels, int sample_rate,
                                         WavFormat format) {
  return std::make_unique<WavSink>(path, channels, sample_rate, format);
}

std::unique_ptr<AudioSink> open_raw_pcm_sink(int fd, int channels, int sample_rate,
                                             RawPcmFormat format, const std::string& name) {
  const int sample = format == RawPcmFormat::s16le ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT;
  return std::make_unique<FdSink>(fd, false, SF_FORMAT_RAW | SF_ENDIAN_LITTLE | sample, channels,
                                  sample_rate, name);
}

std::unique_ptr<AudioSink> open_wav_fd_sink(int fd, int channels, int sample_rate, WavFormat format,
                                            const std::string& name) {
  const int sample = format == WavFormat::pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT;
  return std::make_unique<FdSink>(fd, true, SF_FORMAT_WAV | sample, channels, sample_rate, name);
}

std::unique_ptr<AudioSink> open_audio_sink(const std::string& out, int channels, int sample_rate,
                                           WavFormat format) {
  if (out == "-") return open_raw_pcm_sink(STDOUT_FILENO, channels, sample_rate);
  return open_wav_sink(out, channels, sample_rate, format);
}

}  // namespace meshnn::io
