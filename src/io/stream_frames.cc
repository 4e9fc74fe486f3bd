// Streaming frame readers of meshnn/io/stream_io.h: .npy frames along one axis (read ahead in
// blocks, bounded header) and raw float32 frames from a file, a pipe or stdin.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include "io/file_util.h"
#include "io/npy_header.h"
#include "meshnn/core/error.h"
#include "meshnn/io/stream_io.h"
#include "ops/permute.h"

namespace meshnn::io {

namespace {

static_assert(std::endian::native == std::endian::little,
              "raw frames and .npy data are little-endian; a big-endian host needs byte swaps");

// A .npy header longer than this is refused by the streaming reader (numpy writes < 1 KiB; the
// format's 4 GiB limit would let a crafted file make us allocate that much).
constexpr uint64_t kMaxNpyHeader = uint64_t{1} << 20;
// Read-ahead of the .npy reader: frames per block ≈ this many bytes of file data.
constexpr int64_t kBlockBytes = int64_t{1} << 20;

// Reads exactly n bytes at `offset`; FormatError when the file ends first (it shrank after the
// header was read), BackendError on an I/O error.
void pread_full(int fd, void* buf, size_t n, uint64_t offset, const std::string& name) {
  auto* p = static_cast<uint8_t*>(buf);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, p + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw BackendError(detail::concat(name, ": read failed at byte offset ", offset + got, ": ",
                                        std::strerror(errno)));
    }
    if (r == 0)
      format_fail(name, offset + got, "file ends early (", n - got,
                  " bytes missing; was it truncated while being read?)");
    got += static_cast<size_t>(r);
  }
}

[[noreturn]] void non_finite(const std::string& name, float v, int64_t frame, int64_t value) {
  throw InvalidArgument(
      detail::concat(name, ": non-finite value ", v, " at frame ", frame, ", value ", value));
}

// ---- .npy frames ----------------------------------------------------------------------------

// x: outer × T × inner (dtype f32 | f64) on disk → frames (n, outer · inner) f32.
class NpyFrameSource final : public FrameSource {
 public:
  NpyFrameSource(const std::string& path, int time_axis) : name_(path) {
    // O_NONBLOCK: a FIFO given as a .npy must not block the open (it is refused below).
    fd_.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_.fd < 0)
      throw BackendError(detail::concat(path, ": cannot open: ", std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0)
      throw BackendError(detail::concat(path, ": cannot stat: ", std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
      throw InvalidArgument(detail::concat(
          path,
          ": not a regular file (a .npy is read by offset; stream raw float32 frames with "
          "--frames-from instead)"));
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    uint8_t prefix[12] = {};
    const size_t np = static_cast<size_t>(std::min<uint64_t>(size, sizeof prefix));
    pread_full(fd_.fd, prefix, np, 0, path);
    const uint64_t hend = npy_header_end(prefix, np, size, path);
    if (hend > kMaxNpyHeader)
      format_fail(path, 8, "header of ", hend, " bytes exceeds the streaming reader's limit of ",
                  kMaxNpyHeader);
    std::vector<uint8_t> head(static_cast<size_t>(hend));
    pread_full(fd_.fd, head.data(), head.size(), 0, path);
    const NpyHeader h = parse_npy_header(head.data(), head.size(), size, path);
    if (h.dtype != DType::f32 && h.dtype != DType::f64)
      throw ShapeError(
          detail::concat(path, ": must be float32 or float64, got ", dtype_name(h.dtype)));
    const int r = static_cast<int>(h.shape.size());
    MESHNN_CHECK_AS(ShapeError, r >= 1 && time_axis >= -r && time_axis < r, path, ": time axis ",
                    time_axis, " out of range for shape ", shape_str(h.shape));
    const int ax = time_axis < 0 ? time_axis + r : time_axis;
    shape_ = h.shape;
    dtype_ = h.dtype;
    esize_ = static_cast<int64_t>(dtype_size(h.dtype));
    data_offset_ = h.data_offset;
    T_ = h.shape[ax];
    outer_ = 1;
    inner_ = 1;
    for (int i = 0; i < ax; ++i) outer_ *= h.shape[i];
    for (int i = ax + 1; i < r; ++i) inner_ *= h.shape[i];
    MESHNN_CHECK_AS(ShapeError, outer_ * inner_ > 0, path, ": shape ", shape_str(h.shape),
                    " has frames of 0 values");
    const int64_t frame_bytes = outer_ * inner_ * esize_;
    block_ = std::clamp<int64_t>(kBlockBytes / frame_bytes, 1, std::max<int64_t>(T_, 1));
  }

  const Shape& shape() const { return shape_; }
  int64_t frame_size() const override { return outer_ * inner_; }
  int64_t frames_read() const override { return next_; }
  const std::string& name() const override { return name_; }

  int64_t read(int64_t max_frames, Tensor& out) override {
    MESHNN_CHECK(max_frames >= 1, name_, ": read of ", max_frames, " frames (must be ≥ 1)");
    const int64_t n = std::min(max_frames, T_ - next_);
    if (n <= 0) return 0;
    const int64_t C = outer_ * inner_;
    Tensor y = Tensor::empty({n, C}, DType::f32);
    float* dst = y.data<float>();
    for (int64_t done = 0; done < n;) {
      const int64_t t = next_ + done;
      if (t < blk_start_ || t >= blk_start_ + blk_len_) fill_block(t);
      const int64_t take = std::min(n - done, blk_start_ + blk_len_ - t);
      // stage: (outer, blk_len, inner) → dst rows (take, outer · inner)
      for (int64_t o = 0; o < outer_; ++o) {
        const int64_t src0 = (o * blk_len_ + (t - blk_start_)) * inner_;
        for (int64_t k = 0; k < take; ++k) {
          float* row = dst + (done + k) * C + o * inner_;
          const int64_t s = src0 + k * inner_;
          if (dtype_ == DType::f32) {
            std::memcpy(row, stage_.data() + s * 4, static_cast<size_t>(inner_) * 4);
          } else {
            const auto* d = reinterpret_cast<const double*>(stage_.data()) + s;
            for (int64_t i = 0; i < inner_; ++i) row[i] = static_cast<float>(d[i]);
          }
        }
      }
      done += take;
    }
    for (int64_t i = 0; i < n * C; ++i)
      if (!std::isfinite(dst[i])) non_finite(name_, dst[i], next_ + i / C, i % C);
    next_ += n;
    out = y;
    return n;
  }

 private:
  // Reads frames [t, t + block_) of every outer row: one contiguous pread per outer row.
  void fill_block(int64_t t) {
    blk_start_ = t;
    blk_len_ = std::min(block_, T_ - t);
    const int64_t row_bytes = blk_len_ * inner_ * esize_;
    stage_.resize(static_cast<size_t>(outer_ * row_bytes));
    for (int64_t o = 0; o < outer_; ++o) {
      const uint64_t off = data_offset_ + static_cast<uint64_t>((o * T_ + t) * inner_ * esize_);
      pread_full(fd_.fd, stage_.data() + o * row_bytes, static_cast<size_t>(row_bytes), off, name_);
    }
  }

  std::string name_;
  Fd fd_;
  Shape shape_;
  DType dtype_ = DType::f32;
  int64_t esize_ = 4;
  uint64_t data_offset_ = 0;
  int64_t T_ = 0, outer_ = 1, inner_ = 1;
  int64_t block_ = 1;
  int64_t next_ = 0;
  int64_t blk_start_ = 0, blk_len_ = 0;
  std::vector<uint8_t> stage_;
};

// ---- raw float32 frames ---------------------------------------------------------------------

class RawFrameSource final : public FrameSource {
 public:
  RawFrameSource(int fd, int64_t frame_size, std::string name, bool own)
      : name_(std::move(name)), C_(frame_size) {
    MESHNN_CHECK(frame_size >= 1 && frame_size <= (int64_t{1} << 24), name_, ": frame size ",
                 frame_size, " must be in [1, 2^24]");
    if (own) owned_.fd = fd;
    fd_ = fd;
  }

  int64_t frame_size() const override { return C_; }
  int64_t frames_read() const override { return frames_; }
  const std::string& name() const override { return name_; }

  int64_t read(int64_t max_frames, Tensor& out) override {
    MESHNN_CHECK(max_frames >= 1, name_, ": read of ", max_frames, " frames (must be ≥ 1)");
    const size_t fb = static_cast<size_t>(C_) * sizeof(float);
    // Never hold more than max_frames frames (+ the partial one being completed), nor more than
    // about kBlockBytes: a huge max_frames (2^62) must neither wrap the byte count nor allocate
    // it. A stream source may return fewer frames than asked.
    const int64_t block_frames = std::max<int64_t>(1, kBlockBytes / static_cast<int64_t>(fb));
    const size_t cap =
        std::max(fb * static_cast<size_t>(std::min(max_frames, block_frames)), pending_);
    if (buf_.size() < cap) buf_.resize(cap);
    while (pending_ < fb) {
      if (eof_) break;
      const ssize_t r = ::read(fd_, buf_.data() + pending_, cap - pending_);
      if (r < 0) {
        if (errno == EINTR) continue;
        throw BackendError(detail::concat(name_, ": read failed after ", consumed_ + pending_,
                                          " bytes: ", std::strerror(errno)));
      }
      if (r == 0) eof_ = true;
      pending_ += static_cast<size_t>(r);
    }
    if (pending_ < fb) {
      if (pending_ == 0) return 0;
      format_fail(name_, consumed_, "input ends inside a frame: ", pending_,
                  " trailing bytes of a ", fb, "-byte frame (", C_, " float32 values); ",
                  consumed_ + pending_, " bytes read in all");
    }
    const int64_t n = std::min<int64_t>(max_frames, static_cast<int64_t>(pending_ / fb));
    Tensor y = Tensor::empty({n, C_}, DType::f32);
    const size_t nbytes = static_cast<size_t>(n) * fb;
    std::memcpy(y.raw(), buf_.data(), nbytes);
    const float* v = y.data<float>();
    for (int64_t i = 0; i < n * C_; ++i)
      if (!std::isfinite(v[i])) non_finite(name_, v[i], frames_ + i / C_, i % C_);
    std::memmove(buf_.data(), buf_.data() + nbytes, pending_ - nbytes);
    pending_ -= nbytes;
    consumed_ += nbytes;
    frames_ += n;
    out = y;
    return n;
  }

 private:
  std::string name_;
  Fd owned_;
  int fd_ = -1;
  int64_t C_;
  std::vector<uint8_t> buf_;
  size_t pending_ = 0;     // bytes in buf_ not yet returned
  uint64_t consumed_ = 0;  // bytes returned as frames
  int64_t frames_ = 0;
  bool eof_ = false;
};

}  // namespace

std::unique_ptr<FrameSource> open_npy_frames(const std::string& path, int time_axis) {
  return std::make_unique<NpyFrameSource>(path, time_axis);
}

std::unique_ptr<FrameSource> open_mel_npy(const std::string& path, int64_t num_mels) {
  auto src = std::make_unique<NpyFrameSource>(path, -1);
  const Shape& s = src->shape();
  MESHNN_CHECK_AS(ShapeError, s.size() == 2 || (s.size() == 3 && s[0] == 1), path,
                  ": a mel must be (num_mels, T) or (1, num_mels, T), got ", shape_str(s));
  MESHNN_CHECK_AS(ShapeError, num_mels <= 0 || s[s.size() - 2] == num_mels, path, ": ",
                  s[s.size() - 2], " mel bins, the model expects ", num_mels);
  return src;
}

std::unique_ptr<FrameSource> open_raw_frames(int fd, int64_t frame_size, const std::string& name) {
  return std::make_unique<RawFrameSource>(fd, frame_size, name, false);
}

std::unique_ptr<FrameSource> open_raw_frames(const std::string& path, int64_t frame_size) {
  if (path == "-") return open_raw_frames(STDIN_FILENO, frame_size, "<stdin>");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw BackendError(detail::concat(path, ": cannot open: ", std::strerror(errno)));
  return std::make_unique<RawFrameSource>(fd, frame_size, path, true);
}

// frames: (n, M) → (1, M, n)
Tensor frames_to_mel(const Tensor& frames) {
  MESHNN_CHECK_AS(ShapeError, frames.defined() && frames.rank() == 2,
                  "frames_to_mel: frames must be (n, num_mels), got ",
                  frames.defined() ? shape_str(frames.shape()) : "undefined");
  frames.check_dtype(DType::f32);
  return ops::permute(frames, {1, 0}).reshape({1, frames.dim(1), frames.dim(0)});
}

// frames: (n, Ch · F) → (1, Ch, n, F)
Tensor frames_to_latent(const Tensor& frames, int64_t channels, int64_t freq) {
  MESHNN_CHECK_AS(ShapeError,
                  frames.defined() && frames.rank() == 2 && frames.dim(1) == channels * freq,
                  "frames_to_latent: frames must be (n, ", channels * freq, "), got ",
                  frames.defined() ? shape_str(frames.shape()) : "undefined");
  frames.check_dtype(DType::f32);
  const int64_t n = frames.dim(0);
  return ops::permute(frames.reshape({n, channels, freq}), {1, 0, 2})
      .reshape({1, channels, n, freq});
}

}  // namespace meshnn::io
