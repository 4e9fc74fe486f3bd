// Progressive I/O (include/meshnn/io/stream_io.h): .npy frames along the time axis, raw float32
// frames through a pipe, WAV written as samples arrive (byte-identical to write_wav), raw PCM.
#include "meshnn/io/stream_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>
#include <vector>

#include "io/io_test_util.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/wav.h"

namespace meshnn {
namespace {

using test::random_tensor;
using test::scratch_dir;

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// Reads a source to the end with random read sizes in [1, max_read] → (T, C).
Tensor read_all(io::FrameSource& src, uint32_t seed, int64_t max_read) {
  std::mt19937 rng(seed);
  std::vector<float> all;
  Tensor chunk;
  for (;;) {
    const int64_t want = 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(max_read));
    const int64_t n = src.read(want, chunk);
    if (n == 0) break;
    EXPECT_GE(n, 1);
    EXPECT_LE(n, want);
    EXPECT_EQ(chunk.shape(), (Shape{n, src.frame_size()}));
    all.insert(all.end(), chunk.data<float>(), chunk.data<float>() + chunk.numel());
  }
  const int64_t C = src.frame_size();
  return Tensor::from_vector(all, {static_cast<int64_t>(all.size()) / C, C});
}

// x: outer × T × inner (f32 or f64) → expected frames (T, outer · inner) f32.
Tensor expected_frames(const Tensor& x, int ax) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < ax; ++i) outer *= x.dim(i);
  for (int i = ax + 1; i < x.rank(); ++i) inner *= x.dim(i);
  const int64_t T = x.dim(ax), C = outer * inner;
  Tensor y = Tensor::empty({T, C}, DType::f32);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t s = (o * T + t) * inner + i;
        y.data<float>()[t * C + o * inner + i] =
            x.dtype() == DType::f32 ? x.data<float>()[s] : static_cast<float>(x.data<double>()[s]);
      }
  return y;
}

TEST(StreamIo, MelNpyFramesAreColumns) {
  const std::string dir = scratch_dir();
  for (DType dt : {DType::f32, DType::f64})
    for (bool batch : {false, true}) {
      // f64 with 100 mels: 800-byte frames, about 1310 frames per block, so 3000 frames span three
      // blocks and reads cross block edges.
      const Shape s = batch ? Shape{1, 100, 3000} : Shape{100, 3000};
      const Tensor x = random_tensor(s, dt, 7 + static_cast<uint32_t>(dt));
      const std::string path = dir + "/mel.npy";
      io::save_npy(path, x);
      auto src = io::open_mel_npy(path, 100);
      EXPECT_EQ(src->frame_size(), 100);
      const Tensor got = read_all(*src, 3, 700);
      EXPECT_TRUE(test::same_bytes(got, expected_frames(x, x.rank() - 1)));
      EXPECT_EQ(src->frames_read(), 3000);
      Tensor again;
      EXPECT_EQ(src->read(5, again), 0);
      // Back to the model layout.
      auto src2 = io::open_mel_npy(path);
      Tensor f;
      ASSERT_EQ(src2->read(3000, f), 3000);
      const Tensor mel = io::frames_to_mel(f);
      EXPECT_EQ(mel.shape(), (Shape{1, 100, 3000}));
      EXPECT_TRUE(test::same_bytes(mel, x.reshape({1, 100, 3000}).to(DType::f32)));
    }
}

TEST(StreamIo, LatentNpyFramesInChannelFreqOrder) {
  const std::string dir = scratch_dir();
  for (bool batch : {false, true}) {
    const Shape s = batch ? Shape{1, 8, 5000, 16} : Shape{8, 5000, 16};  // 3 blocks of 2048
    const Tensor x = random_tensor(s, DType::f32, 11);
    const std::string path = dir + "/latent.npy";
    io::save_npy(path, x);
    auto src = io::open_npy_frames(path, -2);  // audio-decode's rule: T second from the end
    EXPECT_EQ(src->frame_size(), 128);
    const Tensor got = read_all(*src, 5, 3000);
    const Tensor want = expected_frames(x, x.rank() - 2);
    EXPECT_TRUE(test::same_bytes(got, want));
    // Frame t value c·16 + f = latent[c, t, f].
    EXPECT_EQ(got.data<float>()[17 * 128 + 3 * 16 + 5], x.data<float>()[(3 * 5000 + 17) * 16 + 5]);
    EXPECT_TRUE(test::same_bytes(io::frames_to_latent(got), x.reshape({1, 8, 5000, 16})));
  }
}

TEST(StreamIo, NpyFrameErrors) {
  const std::string dir = scratch_dir();
  const std::string p = dir + "/x.npy";
  io::save_npy(p, random_tensor({80, 10}, DType::f16, 1));
  EXPECT_THROW(io::open_mel_npy(p), ShapeError);  // float32 / float64 only
  io::save_npy(p, random_tensor({80, 10}, DType::f32, 1));
  EXPECT_THROW(io::open_mel_npy(p, 100), ShapeError);   // wrong mel count
  EXPECT_THROW(io::open_npy_frames(p, 2), ShapeError);  // no such axis
  io::save_npy(p, random_tensor({2, 80, 10}, DType::f32, 1));
  EXPECT_THROW(io::open_mel_npy(p), ShapeError);  // batch 2
  // Truncated data and a bad magic: FormatError naming the file and an offset.
  io::save_npy(p, random_tensor({80, 10}, DType::f32, 1));
  auto bytes = file_bytes(p);
  {
    std::ofstream f(p, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size() - 3));
  }
  EXPECT_TRUE(test::throws_format([&] { io::open_mel_npy(p); }, p, "data is"));
  {
    std::ofstream f(p, std::ios::binary);
    f.write("NOTNPY", 6);
  }
  EXPECT_TRUE(test::throws_format([&] { io::open_mel_npy(p); }, p));
  {
    std::ofstream f(p, std::ios::binary);  // claims a header far past the end
    const char hdr[12] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 2, 0, '\xff', '\xff', '\xff', '\x7f'};
    f.write(hdr, 12);
  }
  EXPECT_TRUE(test::throws_format([&] { io::open_mel_npy(p); }, p, "header length"));
  // A NaN in frame 4, value 2.
  Tensor x = random_tensor({80, 10}, DType::f32, 2);
  x.data<float>()[2 * 10 + 4] = std::nanf("");
  io::save_npy(p, x);
  auto src = io::open_mel_npy(p);
  Tensor out;
  EXPECT_EQ(src->read(4, out), 4);
  try {
    src->read(4, out);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("frame 4, value 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::open_mel_npy(dir + "/missing.npy"), BackendError);
  EXPECT_THROW(io::open_mel_npy(dir), InvalidArgument);  // a folder
  ASSERT_EQ(::mkfifo((dir + "/f.npy").c_str(), 0600), 0);
  EXPECT_THROW(io::open_mel_npy(dir + "/f.npy"), InvalidArgument);  // a FIFO: refused, no hang
}

// Writes `bytes` into a pipe in random pieces (splitting frames), then closes it.
std::thread pipe_writer(int fd, std::vector<uint8_t> bytes, uint32_t seed) {
  return std::thread([fd, bytes = std::move(bytes), seed] {
    std::mt19937 rng(seed);
    size_t at = 0;
    while (at < bytes.size()) {
      const size_t n = std::min<size_t>(bytes.size() - at, 1 + rng() % 997);
      const ssize_t r = ::write(fd, bytes.data() + at, n);
      if (r <= 0) break;
      at += static_cast<size_t>(r);
      if (rng() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::close(fd);
  });
}

TEST(StreamIo, RawFramesFromAPipe) {
  for (int64_t C : {int64_t{80}, int64_t{128}}) {
    const Tensor x = random_tensor({777, C}, DType::f32, 21);
    std::vector<uint8_t> bytes(x.nbytes());
    std::memcpy(bytes.data(), x.raw(), bytes.size());
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::thread w = pipe_writer(fds[1], bytes, 4);
    auto src = io::open_raw_frames(fds[0], C, "<pipe>");
    const Tensor got = read_all(*src, 8, 64);
    w.join();
    ::close(fds[0]);
    EXPECT_TRUE(test::same_bytes(got, x));
  }
  // An empty stream ends at once.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[1]);
  Tensor out;
  EXPECT_EQ(io::open_raw_frames(fds[0], 4)->read(3, out), 0);
  ::close(fds[0]);
}

TEST(StreamIo, RawFramesPartialFrameAtEndIsFormatError) {
  const Tensor x = random_tensor({5, 80}, DType::f32, 3);
  std::vector<uint8_t> bytes(x.nbytes() - 7);  // 4 whole frames + 313 bytes
  std::memcpy(bytes.data(), x.raw(), bytes.size());
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread w = pipe_writer(fds[1], bytes, 9);
  auto src = io::open_raw_frames(fds[0], 80, "<stdin>");
  Tensor out;
  int64_t frames = 0;
  const bool threw = test::throws_format(
      [&] {
        for (int64_t n; (n = src->read(2, out)) > 0;) frames += n;
      },
      "<stdin>", "313 trailing bytes of a 320-byte frame");
  EXPECT_TRUE(threw);
  EXPECT_EQ(frames, 4);
  w.join();
  ::close(fds[0]);
  // Raw frames from a file path, with a NaN.
  const std::string dir = scratch_dir();
  Tensor y = random_tensor({3, 2}, DType::f32, 5);
  y.data<float>()[5] = INFINITY;
  {
    std::ofstream f(dir + "/raw.f32", std::ios::binary);
    f.write(static_cast<const char*>(y.raw()), static_cast<std::streamsize>(y.nbytes()));
  }
  auto fsrc = io::open_raw_frames(dir + "/raw.f32", 2);
  EXPECT_THROW(fsrc->read(8, out), InvalidArgument);
  EXPECT_THROW(io::open_raw_frames(dir + "/none.f32", 2), BackendError);
}

// Writes x (C, T) to a sink in random chunk sizes (including empty ones).
void write_chunks(io::AudioSink& sink, const Tensor& x, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t T = x.dim(1);
  for (int64_t t = 0; t < T;) {
    const int64_t n = std::min<int64_t>(T - t, rng() % 1500);
    sink.write(x.narrow(1, t, n));
    t += n;
  }
}

// (C, T), channels first as the sinks take it.
Tensor audio(int64_t T, int64_t C, uint32_t seed) {
  Tensor x = random_tensor({C, T}, DType::f32, seed);
  float* p = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] *= 0.4f;  // mostly in [-1.2, 1.2]: some clip
  return x;
}

TEST(StreamIo, WavSinkIsByteIdenticalToWriteWav) {
  const std::string dir = scratch_dir();
  for (io::WavFormat fmt : {io::WavFormat::float32, io::WavFormat::pcm16})
    for (int C : {1, 2}) {
      const Tensor x = audio(12345, C, 30 + C);
      io::write_wav(dir + "/oneshot.wav", x, 48000, fmt);
      auto sink = io::open_wav_sink(dir + "/stream.wav", C, 48000, fmt);
      write_chunks(*sink, x, 12);
      EXPECT_EQ(sink->frames_written(), 12345);
      sink->close();
      sink->close();  // idempotent
      EXPECT_EQ(file_bytes(dir + "/stream.wav"), file_bytes(dir + "/oneshot.wav"));
      EXPECT_THROW(sink->write(x), InvalidArgument);
    }
}

TEST(StreamIo, WavSinkIsReadableMidStream) {
  const std::string dir = scratch_dir();
  const Tensor x = audio(4000, 2, 40);
  auto sink = io::open_wav_sink(dir + "/s.wav", 2, 24000, io::WavFormat::float32);
  const Tensor part = x.narrow(1, 0, 1500);
  sink->write(part);
  // Not closed: the growing scratch file beside the target (the only file in `dir`) already
  // states the 1500 frames written.
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string growing = files[0].string();
  EXPECT_EQ(files[0].filename().string().rfind(".s.wav.meshnn-tmp.", 0), 0u) << growing;
  const io::WavAudio mid = io::read_wav(growing);
  EXPECT_EQ(mid.sample_rate, 24000);
  EXPECT_TRUE(test::same_bytes(mid.samples, part));
  EXPECT_FALSE(std::filesystem::exists(dir + "/s.wav"));  // renamed only on success
  sink->close();
  EXPECT_EQ(io::read_wav(dir + "/s.wav").samples.dim(1), 1500);
  EXPECT_FALSE(std::filesystem::exists(growing));
}

// Issue 23 item 6: a stream that fails (destroyed unclosed) leaves the file it was to replace as
// it was, and no scratch file.
TEST(StreamIo, FailedWavSinkKeepsTheOldFile) {
  const std::string dir = scratch_dir();
  const Tensor old = audio(700, 2, 41);
  io::write_wav(dir + "/keep.wav", old, 24000);
  const std::vector<uint8_t> before = file_bytes(dir + "/keep.wav");
  {
    auto sink = io::open_wav_sink(dir + "/keep.wav", 2, 24000, io::WavFormat::float32);
    sink->write(audio(300, 2, 42));
    Tensor bad = audio(4, 2, 43);
    bad.data<float>()[3] = NAN;
    EXPECT_THROW(sink->write(bad), InvalidArgument);
  }  // given up
  EXPECT_EQ(file_bytes(dir + "/keep.wav"), before);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);  // no scratch file left
}

TEST(StreamIo, WavSinkIntoAFifoAndThroughASymlink) {
  const std::string dir = scratch_dir();
  const Tensor x = audio(5000, 2, 50);
  io::write_wav(dir + "/oneshot.wav", x, 44100, io::WavFormat::pcm16);
  const std::string fifo = dir + "/out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<uint8_t> got;
  std::thread reader([&] { got = file_bytes(fifo); });
  {
    auto sink = io::open_wav_sink(fifo, 2, 44100, io::WavFormat::pcm16);
    write_chunks(*sink, x, 13);
    sink->close();
  }
  reader.join();
  EXPECT_EQ(got, file_bytes(dir + "/oneshot.wav"));
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // still a FIFO
  // A symlink is followed; the link stays a link.
  ASSERT_EQ(::symlink("target.wav", (dir + "/link.wav").c_str()), 0);
  auto sink = io::open_wav_sink(dir + "/link.wav", 2, 44100, io::WavFormat::pcm16);
  write_chunks(*sink, x, 14);
  sink->close();
  EXPECT_EQ(file_bytes(dir + "/target.wav"), file_bytes(dir + "/oneshot.wav"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.wav"));
}

TEST(StreamIo, RawPcmSinkMatchesTheWavData) {
  const std::string dir = scratch_dir();
  const Tensor x = audio(3000, 2, 60);
  for (auto [raw, wav] : {std::pair{io::RawPcmFormat::s16le, io::WavFormat::pcm16},
                          std::pair{io::RawPcmFormat::f32le, io::WavFormat::float32}}) {
    io::write_wav(dir + "/ref.wav", x, 48000, wav);
    const std::vector<uint8_t> ref = file_bytes(dir + "/ref.wav");
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::vector<uint8_t> got;
    std::thread reader([&] {
      uint8_t buf[4096];
      for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;)
        got.insert(got.end(), buf, buf + r);
    });
    {
      auto sink = io::open_raw_pcm_sink(fds[1], 2, 48000, raw, "<pipe>");
      write_chunks(*sink, x, 15);
      sink->close();
    }
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    // The data chunk is the WAV's last bytes (no chunk follows it).
    const size_t n = static_cast<size_t>(x.numel()) * (raw == io::RawPcmFormat::s16le ? 2 : 4);
    ASSERT_EQ(got.size(), n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), ref.end() - static_cast<std::ptrdiff_t>(n)));
  }
}

TEST(StreamIo, SinkErrors) {
  const std::string dir = scratch_dir();
  auto sink = io::open_wav_sink(dir + "/e.wav", 2, 48000);
  EXPECT_THROW(sink->write(Tensor::empty({4, 1}, DType::f32)), ShapeError);
  Tensor bad = audio(4, 2, 1);  // (2, 4)
  bad.data<float>()[6] = NAN;   // channel 1, sample 2
  try {
    sink->write(bad);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sample 2, channel 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::open_wav_sink(dir + "/e.wav", 0, 48000), InvalidArgument);
  EXPECT_THROW(io::open_wav_sink(dir + "/e.wav", 1, 0), InvalidArgument);
  EXPECT_THROW(io::open_wav_sink(dir + "/no/such/dir/e.wav", 1, 48000), BackendError);
  // A reader that goes away: BackendError naming the closed pipe (with SIGPIPE ignored).
  auto old = std::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  auto raw = io::open_raw_pcm_sink(fds[1], 1, 48000);
  try {
    raw->write(audio(100, 1, 2));
    FAIL() << "no error";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("closed the pipe"), std::string::npos) << e.what();
  }
  raw.reset();
  ::close(fds[1]);
  std::signal(SIGPIPE, old);
}

}  // namespace
}  // namespace meshnn
