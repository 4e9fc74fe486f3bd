// libFuzzer target: the progressive frame readers of include/meshnn/io/stream_io.h on arbitrary
// bytes held in a memory file. Byte 0 picks the read sizes and frame size; byte 1 the readers'
// options beyond those: a huge read size (up to 2^62 frames, the `--push-frames` the CLI bounds;
// the readers must neither wrap a byte count nor allocate it) or a bad one (0, negative: an
// InvalidArgument); the rest is the input:
//   - as a .npy read along its last and second-to-last axes: whatever opens must give exactly the
//     frames of load_npy_bytes on the same bytes (same values, f64 rounded to f32);
//   - as raw float32 frames of 1 + (byte 0 % 13) values: the frames are the bytes, and the stream
//     ends with 0 frames or a FormatError exactly when a partial frame is left.
// A meshnn::Error is expected for bad input; anything else (or a mismatch) is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "meshnn/io/npy.h"
#include "meshnn/io/stream_io.h"

namespace {

int memory_file(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz", 0);
  if (fd < 0) std::abort();
  for (size_t at = 0; at < size;) {
    const ssize_t r = write(fd, data + at, size - at);
    if (r <= 0) std::abort();
    at += static_cast<size_t>(r);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

// Expected value of frame t, value c for a (outer, T, inner) tensor.
float expected(const meshnn::Tensor& x, int ax, int64_t t, int64_t c) {
  int64_t inner = 1;
  for (int i = ax + 1; i < x.rank(); ++i) inner *= x.dim(i);
  const int64_t o = c / inner, i = c % inner;
  const int64_t idx = (o * x.dim(ax) + t) * inner + i;
  return x.dtype() == meshnn::DType::f32 ? x.data<float>()[idx]
                                         : static_cast<float>(x.data<double>()[idx]);
}

void check_npy(const std::string& path, const uint8_t* data, size_t size, int axis, int64_t step) {
  meshnn::Tensor ref;
  try {
    ref = meshnn::io::load_npy_bytes(data, size, "ref");
  } catch (const meshnn::Error&) {
  }
  try {
    auto src = meshnn::io::open_npy_frames(path, axis);
    // Opened: the whole-file parser must agree, with a float dtype.
    if (!ref.defined()) std::abort();
    const int ax = axis < 0 ? axis + ref.rank() : axis;
    meshnn::Tensor out;
    int64_t t = 0;
    for (int64_t n; (n = src->read(step, out)) > 0; t += n)
      for (int64_t k = 0; k < n; ++k)
        for (int64_t c = 0; c < src->frame_size(); ++c) {
          const float v = out.data<float>()[k * src->frame_size() + c];
          const float e = expected(ref, ax, t + k, c);
          if (std::memcmp(&v, &e, 4) != 0) std::abort();
        }
    if (t != ref.dim(ax)) std::abort();
  } catch (const meshnn::Error&) {
  }
}

// The read size option from `sel`: small (1 … 7), huge (2^(40 + sel % 23)), or invalid.
int64_t read_size(uint8_t pick, uint8_t sel) {
  switch (sel % 4) {
    case 0:
    case 1:
      return 1 + pick % 7;
    case 2:
      return int64_t{1} << (40 + sel % 23);
    default:
      return sel % 8 == 3 ? 0 : -1 - sel;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int64_t step = read_size(data[0], data[1]);
  const uint8_t* body = data + 2;
  const size_t n = size - 2;
  if (step < 1) {
    // An invalid read size is refused, not taken as the end of the input.
    const int fd = memory_file(body, n);
    auto raw = meshnn::io::open_raw_frames(fd, 1 + data[0] % 13, "fuzz-raw");
    meshnn::Tensor out;
    bool refused = false;
    try {
      raw->read(step, out);
    } catch (const meshnn::InvalidArgument&) {
      refused = true;
    }
    if (!refused) std::abort();
    close(fd);
    return 0;
  }
  const int fd = memory_file(body, n);
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  check_npy(path, body, n, -1, step);
  check_npy(path, body, n, -2, step);

  const int64_t C = 1 + data[0] % 13;
  const size_t fb = static_cast<size_t>(C) * 4;
  lseek(fd, 0, SEEK_SET);
  auto raw = meshnn::io::open_raw_frames(fd, C, "fuzz-raw");
  meshnn::Tensor out;
  size_t at = 0;
  bool format_error = false;
  try {
    for (int64_t k; (k = raw->read(step, out)) > 0; at += static_cast<size_t>(k) * fb)
      if (std::memcmp(out.raw(), body + at, static_cast<size_t>(k) * fb) != 0) std::abort();
  } catch (const meshnn::FormatError&) {
    format_error = true;
  } catch (const meshnn::InvalidArgument&) {  // a non-finite value: the stream stops there
    close(fd);
    return 0;
  }
  if (format_error != (n % fb != 0) || at != n - n % fb) std::abort();
  close(fd);
  return 0;
}
