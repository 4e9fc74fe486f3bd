#include "meshnn/io/wav.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/file_util.h"
#include "ops/permute.h"

namespace meshnn::io {

namespace {

// Far above any real recording; bounds what a crafted header can make us allocate per frame.
constexpr int kMaxChannels = 1024;

// libsndfile virtual I/O over a read-only byte range.
struct MemoryFile {
  const uint8_t* data;
  sf_count_t size;
  sf_count_t pos = 0;
};

sf_count_t vio_length(void* user) { return static_cast<MemoryFile*>(user)->size; }
sf_count_t vio_seek(sf_count_t offset, int whence, void* user) {
  auto* m = static_cast<MemoryFile*>(user);
  sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->size;
  sf_count_t to;
  if (__builtin_add_overflow(base, offset, &to) || to < 0) return -1;
  m->pos = to;  // past the end is allowed (reads then return 0), like a file
  return m->pos;
}
sf_count_t vio_read(void* ptr, sf_count_t count, void* user) {
  auto* m = static_cast<MemoryFile*>(user);
  if (count <= 0 || m->pos >= m->size) return 0;
  const sf_count_t n = std::min(count, m->size - m->pos);
  std::memcpy(ptr, m->data + m->pos, static_cast<size_t>(n));
  m->pos += n;
  return n;
}
sf_count_t vio_write(const void*, sf_count_t, void*) { return 0; }
sf_count_t vio_tell(void* user) { return static_cast<MemoryFile*>(user)->pos; }

struct SndCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndPtr = std::unique_ptr<SNDFILE, SndCloser>;

// A RIFF WAVE whose data chunk declares more bytes than the file holds was cut short (a copy or
// download that stopped): libsndfile would read the part that is there as a shorter recording,
// without an error, so it is refused here. A declared size of 0 or 0xFFFFFFFF (a writer that never
// came back to fill it in, and RF64's placeholder) is not a claim and passes; other formats pass
// (libsndfile judges them). data: the whole file, `size` bytes.
void check_not_cut_short(const uint8_t* data, uint64_t size, const std::string& name) {
  if (size < 12 || std::memcmp(data, "RIFF", 4) != 0 || std::memcmp(data + 8, "WAVE", 4) != 0)
    return;
  auto le32 = [](const uint8_t* b) {
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  };
  uint64_t at = 12;
  // Chunks before the data chunk (fmt, LIST, fact, …), each padded to an even length; bounded
  // so a file of tiny chunks cannot keep us walking.
  for (int chunk = 0; chunk < 4096 && at + 8 <= size; ++chunk) {
    const uint8_t* hdr = data + at;
    const uint64_t len = le32(hdr + 4);
    if (std::memcmp(hdr, "data", 4) == 0) {
      const uint64_t have = size - (at + 8);
      if (len != 0 && len != 0xFFFFFFFFu && len > have)
        format_fail(name, at, "truncated WAV: the data chunk declares ", len, " bytes, the file ",
                    "holds ", have, " after it (an interrupted copy or download?)");
      return;
    }
    at += 8 + len + (len & 1);
  }
}

// Decodes an opened file into (C, T) f32. Reads in chunks rather than trusting the frame count
// in the header, so a truncated or lying header cannot trigger a huge allocation.
WavAudio decode(SNDFILE* snd, const SF_INFO& info, const std::string& name) {
  const int major = info.format & SF_FORMAT_TYPEMASK;
  if (major != SF_FORMAT_WAV && major != SF_FORMAT_WAVEX && major != SF_FORMAT_RF64)
    format_fail(name, 0, "not a WAV file (libsndfile major format 0x", std::hex, major, ")");
  if (info.channels < 1 || info.channels > kMaxChannels)
    format_fail(name, 0, "unsupported channel count ", info.channels);
  if (info.samplerate < 1) format_fail(name, 0, "invalid sample rate ", info.samplerate);
  // Integer PCM → float scaled to [-1, 1) (libsndfile's default normalisation, made explicit).
  sf_command(snd, SFC_SET_NORM_FLOAT, nullptr, SF_TRUE);
  const int c = info.channels;
  std::vector<float> buf;
  constexpr sf_count_t kChunkFrames = 4096;
  sf_count_t frames = 0;
  for (;;) {
    buf.resize(static_cast<size_t>((frames + kChunkFrames) * c));
    const sf_count_t got = sf_readf_float(snd, buf.data() + frames * c, kChunkFrames);
    if (got <= 0) break;
    frames += got;
  }
  if (sf_error(snd) != SF_ERR_NO_ERROR)
    format_fail(name, 0, "decoding failed after ", frames, " frames: ", sf_strerror(snd));
  WavAudio out;
  // libsndfile hands frames interleaved, (T, C); the API is channels first.
  out.samples = ops::deinterleave(Tensor::view(buf.data(), {frames, c}, DType::f32));
  out.sample_rate = info.samplerate;
  return out;
}

}  // namespace

WavAudio read_wav(const std::string& path) {
  // One decoder for files and memory: map_file takes regular files only (sf_open of a FIFO would
  // block) and says "cannot open" as a BackendError; what it maps is judged as bytes.
  const std::shared_ptr<ByteSource> bytes = ByteSource::map_file(path);
  return read_wav_bytes(bytes->data, bytes->size, path);
}

WavAudio read_wav_bytes(const uint8_t* data, size_t size, const std::string& name) {
  check_not_cut_short(data, size, name);
  SF_VIRTUAL_IO vio{vio_length, vio_seek, vio_read, vio_write, vio_tell};
  MemoryFile mem{data, static_cast<sf_count_t>(size)};
  SF_INFO info{};
  SndPtr snd(sf_open_virtual(&vio, SFM_READ, &info, &mem));
  if (!snd) format_fail(name, 0, "not a readable WAV file: ", sf_strerror(nullptr));
  return decode(snd.get(), info, name);
}

// samples: (C, T) f32 → RIFF WAVE, float32 or pcm16.
void write_wav(const std::string& path, const Tensor& samples, int sample_rate, WavFormat format) {
  MESHNN_CHECK_AS(ShapeError,
                  samples.defined() && samples.rank() == 2 && samples.dim(0) >= 1 &&
                      samples.dim(0) <= kMaxChannels,
                  "write_wav: samples must be (C, T), channels first, with 1 ≤ C ≤ ", kMaxChannels,
                  ", got ", samples.defined() ? shape_str(samples.shape()) : "undefined");
  samples.check_dtype(DType::f32);
  MESHNN_CHECK(sample_rate > 0, "write_wav: sample rate ", sample_rate, " must be positive");
  const int64_t C = samples.dim(0), T = samples.dim(1);
  const float* p = samples.data<float>();
  for (int64_t i = 0; i < samples.numel(); ++i)
    MESHNN_CHECK(std::isfinite(p[i]), "write_wav: ", path, ": non-finite sample ", p[i],
                 " at frame ", i % T, ", channel ", i / T);
  const Tensor frames = ops::interleave(samples);  // (T, C): the data chunk's order
  const float* x = frames.data<float>();

  write_output(path, [&](const std::string& tmp) {
    SF_INFO info{};
    info.samplerate = sample_rate;
    info.channels = static_cast<int>(C);
    info.format = SF_FORMAT_WAV | (format == WavFormat::pcm16 ? SF_FORMAT_PCM_16 : SF_FORMAT_FLOAT);
    SndPtr snd(sf_open(tmp.c_str(), SFM_WRITE, &info));
    if (!snd)
      throw BackendError(detail::concat(path, ": cannot write WAV: ", sf_strerror(nullptr)));
    // pcm16: clip out-of-range floats instead of letting them wrap around.
    sf_command(snd.get(), SFC_SET_CLIPPING, nullptr, SF_TRUE);
    // No PEAK chunk: it carries a timestamp, and equal samples should give equal files.
    sf_command(snd.get(), SFC_SET_ADD_PEAK_CHUNK, nullptr, SF_FALSE);
    if (sf_writef_float(snd.get(), x, T) != T)
      throw BackendError(detail::concat(path, ": WAV write failed: ", sf_strerror(snd.get())));
    if (sf_close(snd.release()) != 0)
      throw BackendError(detail::concat(path, ": WAV close failed"));
  });
}

// samples (C, T) → (C, 1, T)
Tensor channels_as_batch(const Tensor& samples) {
  MESHNN_CHECK_AS(ShapeError, samples.defined() && samples.rank() == 2,
                  "channels_as_batch: samples must be (C, T), got ",
                  samples.defined() ? shape_str(samples.shape()) : "undefined");
  return samples.reshape({samples.dim(0), 1, samples.dim(1)});
}

}  // namespace meshnn::io
