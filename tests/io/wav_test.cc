#include "meshnn/io/wav.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

std::vector<uint8_t> slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

// Runs fn, expects FormatError naming `file`.
::testing::AssertionResult throws_format_naming(const std::function<void()>& fn,
                                                const std::string& file) {
  try {
    fn();
  } catch (const FormatError& e) {
    if (std::string(e.what()).find(file) == std::string::npos)
      return ::testing::AssertionFailure() << "does not name " << file << ": " << e.what();
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "other exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TEST(Wav, Float32RoundTripIsExact) {
  const std::string path = scratch_dir() + "/f.wav";
  const Tensor x = random_uniform({2, 1000}, 42, -0.99f, 0.99f);  // (C, T)
  io::write_wav(path, x, 48000, io::WavFormat::float32);
  const io::WavAudio a = io::read_wav(path);
  EXPECT_EQ(a.sample_rate, 48000);
  EXPECT_TRUE(bit_equal(a.samples, x));
  // The in-memory reader agrees with the file reader.
  const std::vector<uint8_t> b = slurp(path);
  const io::WavAudio m = io::read_wav_bytes(b.data(), b.size(), "mem.wav");
  EXPECT_EQ(m.sample_rate, 48000);
  EXPECT_TRUE(bit_equal(m.samples, x));
}

// The one wave layout: write_wav takes and read_wav gives (C, T), channels first, and the file's
// data chunk holds the frames interleaved (sample t of channel c at frame t, slot c), as every
// other WAV reader expects. Checked on the bytes, not only by a round trip.
TEST(Wav, ChannelsFirstInTheApiInterleavedInTheFile) {
  const std::string path = scratch_dir() + "/layout.wav";
  const int64_t C = 3, T = 257;
  const Tensor x = random_uniform({C, T}, 47, -0.9f, 0.9f);
  io::write_wav(path, x, 22050);
  const std::vector<uint8_t> b = slurp(path);
  size_t at = 12;
  while (at + 8 <= b.size() && std::memcmp(b.data() + at, "data", 4) != 0)
    at += 8 + (b[at + 4] | b[at + 5] << 8 | b[at + 6] << 16 | size_t(b[at + 7]) << 24);
  ASSERT_LE(at + 8 + static_cast<size_t>(C * T) * 4, b.size());
  const uint8_t* data = b.data() + at + 8;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c)
      ASSERT_EQ(std::memcmp(data + (t * C + c) * 4, x.data<float>() + c * T + t, 4), 0)
          << "frame " << t << " channel " << c;
  const io::WavAudio a = io::read_wav(path);
  ASSERT_EQ(a.samples.shape(), (Shape{C, T}));
  EXPECT_TRUE(bit_equal(a.samples, x));
}

TEST(Wav, ChannelsAsBatchPutsEachChannelInItsOwnItem) {
  const Tensor x = random_uniform({3, 37}, 7, -1.f, 1.f);  // (C, T)
  const Tensor y = io::channels_as_batch(x);
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{3, 1, 37}));
  const float* src = x.data<float>();
  const float* dst = y.data<float>();
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t t = 0; t < 37; ++t) ASSERT_EQ(dst[c * 37 + t], src[c * 37 + t]) << c << "," << t;
  EXPECT_THROW(io::channels_as_batch(random_uniform({4, 2, 1}, 1, -1.f, 1.f)), ShapeError);
  EXPECT_THROW(io::channels_as_batch(Tensor()), ShapeError);
}

TEST(Wav, Pcm16RoundTripWithinOneStep) {
  const std::string path = scratch_dir() + "/p.wav";
  const Tensor x = random_uniform({1, 777}, 43, -0.9f, 0.9f);
  io::write_wav(path, x, 16000, io::WavFormat::pcm16);
  const io::WavAudio a = io::read_wav(path);
  EXPECT_EQ(a.sample_rate, 16000);
  ASSERT_EQ(a.samples.shape(), (Shape{1, 777}));
  EXPECT_EQ(slurp(path).size(), 44u + 777u * 2u);  // canonical 44-byte header + 16-bit samples
  for (int i = 0; i < 777; ++i)
    EXPECT_NEAR(a.samples.data<float>()[i], x.data<float>()[i], 1.0 / 32768) << i;
}

TEST(Wav, Pcm16ClipsOutOfRange) {
  const std::string path = scratch_dir() + "/c.wav";
  io::write_wav(path, Tensor::from_vector<float>({2.f, -3.f, 0.5f}, {1, 3}), 8000,
                io::WavFormat::pcm16);
  const Tensor s = io::read_wav(path).samples;
  EXPECT_NEAR(s.data<float>()[0], 1.f, 1e-4);
  EXPECT_NEAR(s.data<float>()[1], -1.f, 1e-4);
  EXPECT_NEAR(s.data<float>()[2], 0.5f, 1e-4);
}

TEST(Wav, FailedWriteLeavesNoFile) {
  const std::string dir = scratch_dir();
  const std::string path = dir + "/nan.wav";
  Tensor x = random_uniform({2, 10}, 44);
  x.data<float>()[13] = NAN;  // channel 1, frame 3
  try {
    io::write_wav(path, x, 16000);
    ADD_FAILURE() << "no error for a NaN";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("at frame 3, channel 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::write_wav(path, random_uniform({10}, 1), 16000), ShapeError);
  // (T, C) with T > the channel limit: the old layout is refused, not written as 2000 channels.
  EXPECT_THROW(io::write_wav(path, random_uniform({2000, 2}, 1), 16000), ShapeError);
  EXPECT_THROW(io::write_wav(dir + "/no/such/dir/x.wav", random_uniform({1, 10}, 1), 16000),
               BackendError);
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // nothing partial, no temporary left behind
}

TEST(Wav, OverwriteReplacesAtomically) {
  const std::string path = scratch_dir() + "/o.wav";
  io::write_wav(path, random_uniform({1, 100}, 1), 16000);
  const Tensor y = random_uniform({3, 50}, 2);
  io::write_wav(path, y, 24000);
  const io::WavAudio a = io::read_wav(path);
  EXPECT_EQ(a.sample_rate, 24000);
  EXPECT_TRUE(bit_equal(a.samples, y));
}

TEST(WavMalformed, GarbageNamesTheFile) {
  const std::vector<uint8_t> junk = {'R', 'I', 'F', 'F', 1, 2, 3, 4, 'W', 'A', 'V', 'E', 9, 9};
  EXPECT_TRUE(throws_format_naming(
      [&] { io::read_wav_bytes(junk.data(), junk.size(), "junk.wav"); }, "junk.wav"));
  EXPECT_TRUE(
      throws_format_naming([&] { io::read_wav_bytes(nullptr, 0, "empty.wav"); }, "empty.wav"));
  const std::string path = scratch_dir() + "/junk.wav";
  {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(junk.data()), junk.size());
  }
  EXPECT_TRUE(throws_format_naming([&] { io::read_wav(path); }, path));
  EXPECT_THROW(io::read_wav(path + ".missing"), BackendError);
}

// A WAV cut short (its data chunk declares more than the file holds) is refused, not read as a
// shorter recording: from memory and from a file, naming the file.
TEST(WavMalformed, TruncatedDataIsRefused) {
  const std::string path = scratch_dir() + "/t.wav";
  const Tensor x = random_uniform({2, 100}, 45);
  io::write_wav(path, x, 16000);
  std::vector<uint8_t> b = slurp(path);
  ASSERT_GT(b.size(), 83u);
  // erase, not resize: g++ 12 -Wstringop-overflow misfires on resize(size() - k) under ASan.
  b.erase(b.end() - (8 * 10 + 3), b.end());  // drop 10 frames and a partial one
  EXPECT_TRUE(
      throws_format_naming([&] { io::read_wav_bytes(b.data(), b.size(), "cut.wav"); }, "cut.wav"));
  const std::string cut = scratch_dir() + "/cut.wav";
  {
    std::ofstream(cut, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  EXPECT_TRUE(throws_format_naming([&] { io::read_wav(cut); }, cut));
}

// A data size of 0 (a recorder that never filled it in) is no claim: the samples after it read.
TEST(WavMalformed, UnfilledDataSizeReadsWhatIsThere) {
  const std::string path = scratch_dir() + "/u.wav";
  const Tensor x = random_uniform({1, 64}, 46);
  io::write_wav(path, x, 16000);
  std::vector<uint8_t> b = slurp(path);
  // The data chunk header: find "data" and zero its size.
  size_t at = 12;
  while (at + 8 <= b.size() && std::memcmp(b.data() + at, "data", 4) != 0)
    at += 8 + (b[at + 4] | b[at + 5] << 8 | b[at + 6] << 16 | size_t(b[at + 7]) << 24);
  ASSERT_LT(at + 8, b.size());
  std::fill(b.begin() + static_cast<std::ptrdiff_t>(at + 4),
            b.begin() + static_cast<std::ptrdiff_t>(at + 8), 0);
  const io::WavAudio a = io::read_wav_bytes(b.data(), b.size(), "unfilled.wav");
  ASSERT_EQ(a.samples.dim(0), 1);
  for (int64_t i = 0; i < a.samples.numel(); ++i)
    EXPECT_EQ(a.samples.data<float>()[i], x.data<float>()[i]);
}

}  // namespace
}  // namespace meshnn::test
