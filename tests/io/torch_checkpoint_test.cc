// The weights-only torch.save reader: real files torch wrote (tests/fixtures/torch_checkpoint,
// bigvgan_nvidia_folder; tools/goldens/gen_torch_checkpoints.py), hand-made hostile pickles in a
// zip this test writes, corrupt and truncated archives, and NVIDIA's BigVGAN folder giving the
// same bits as the safetensors checkpoint.
#include "meshnn/io/torch_checkpoint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "io/io_test_util.h"
#include "io/stored_zip.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "support/golden.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;  // pickles hold NUL bytes

// A zip of stored entries as torch.save lays it out (no alignment padding: the reader copies
// misaligned data). entries: name → bytes.
std::vector<uint8_t> make_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::vector<uint8_t> out, dir;
  auto put = [](std::vector<uint8_t>& v, uint64_t x, int n) {
    for (int i = 0; i < n; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
  };
  for (const auto& [name, data] : entries) {
    const uint32_t crc = io::crc32(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    const uint64_t local = out.size();
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 4);
    put(out, crc, 4), put(out, data.size(), 4), put(out, data.size(), 4);
    put(out, name.size(), 2), put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());
    put(dir, 0x02014b50, 4), put(dir, 20, 2), put(dir, 20, 2), put(dir, 0, 2), put(dir, 0, 2);
    put(dir, 0, 4), put(dir, crc, 4), put(dir, data.size(), 4), put(dir, data.size(), 4);
    put(dir, name.size(), 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2), put(dir, 0, 2);
    put(dir, 0, 4), put(dir, local, 4);
    dir.insert(dir.end(), name.begin(), name.end());
  }
  const uint64_t at = out.size();
  out.insert(out.end(), dir.begin(), dir.end());
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, entries.size(), 2);
  put(out, entries.size(), 2), put(out, dir.size(), 4), put(out, at, 4), put(out, 0, 2);
  return out;
}

// A pickle (protocol 2) of {'w': tensor of 3 f32 over storage '0'}, with `payload` spliced in as
// the dict's value instead when given.
std::string pickle_of(const std::string& payload = "") {
  std::string p = "\x80\x02}X\x01\x00\x00\x00w"s;
  if (!payload.empty()) return p + payload + "s.";
  p += "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"s;
  p += "X\x01\x00\x00\x00"s + "0X\x03\x00\x00\x00"s + "cpuK\x03tQK\x00K\x03\x85K\x01\x85\x89"s;
  p += "ccollections\nOrderedDict\n)RtRs.";
  return p;
}

std::string floats(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * sizeof(float));
}

io::TorchCheckpoint from_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  return io::TorchCheckpoint::from_bytes(make_zip(entries), "test.pt");
}

void expect_refused(const std::string& pickle, const std::string& needle) {
  try {
    from_zip({{"a/data.pkl", pickle}, {"a/data/0", floats({1, 2, 3})}});
    FAIL() << "accepted a pickle that should be refused (" << needle << ")";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("test.pt"), std::string::npos) << e.what();
  }
}

TEST(TorchCheckpoint, ReadsEveryDtypeStrideAndOffsetTorchWrote) {
  const auto ck = io::TorchCheckpoint::open(test::fixture_path("torch_checkpoint/dtypes.pt"));
  for (const char* k : {"f32", "f16", "bf16", "f64"}) {
    const Tensor t = ck.get(k).to(DType::f32);
    ASSERT_EQ(t.shape(), (Shape{3, 4})) << k;
    for (int i = 0; i < 12; ++i) EXPECT_EQ(t.data<float>()[i], i * 0.5f - 1.0f) << k << i;
  }
  const Tensor tr = ck.get("transposed");
  ASSERT_EQ(tr.shape(), (Shape{4, 3}));
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(tr.data<float>()[r * 3 + c], (c * 4 + r) * 0.5f - 1.0f);
  EXPECT_EQ(ck.get("i64").data<int64_t>()[0], -3);
  EXPECT_EQ(ck.get("i32").data<int32_t>()[5], 2);
  EXPECT_EQ(ck.get("u8").data<uint8_t>()[5], 255);
  EXPECT_EQ(ck.get("bool").dtype(), DType::boolean);
  EXPECT_EQ(ck.get("shared.tail").data<float>()[0], 1.5f);  // offset 6 · 0.25
  EXPECT_EQ(ck.get("shared.head").data<float>()[3], 0.75f);
  EXPECT_EQ(ck.get("param").data<float>()[3], 1.5f);
  EXPECT_EQ(ck.get("scalar").shape(), Shape{});
  EXPECT_EQ(ck.get("scalar").data<float>()[0], 7.25f);
  EXPECT_EQ(ck.get("empty").shape(), (Shape{0, 3}));
  EXPECT_THROW(ck.get("nope"), WeightError);
}

TEST(TorchCheckpoint, HandMadeStateDictReads) {
  const auto ck = from_zip({{"x/data.pkl", pickle_of()}, {"x/data/0", floats({1, 2, 3})}});
  EXPECT_EQ(ck.get("w").data<float>()[2], 3.0f);
}

TEST(TorchCheckpoint, CodeAndObjectsInThePickleAreRefused) {
  // os.system('echo pwned') through GLOBAL + REDUCE: refused at the GLOBAL, before any REDUCE.
  expect_refused(pickle_of("cos\nsystem\n(X\x0a\x00\x00\x00"s + "echo pwnedtR"), "'os.system'");
  expect_refused(pickle_of("cbuiltins\neval\n(X\x01\x00\x00\x00"s + "1tR"), "'builtins.eval'");
  // A pickled nn.Module (its class through GLOBAL, then NEWOBJ / BUILD).
  expect_refused(pickle_of("ctorch.nn.modules.conv\nConv1d\n)\x81}b"),
                 "'torch.nn.modules.conv.Conv1d'");
  // REDUCE on an allowed global that is not callable here (a storage class).
  expect_refused(pickle_of("ctorch\nFloatStorage\n)R"), "REDUCE");
  // NEWOBJ of OrderedDict, BUILD on a plain dict, INST, STACK_GLOBAL, DUP.
  expect_refused(pickle_of("ccollections\nOrderedDict\n)\x81"), "NEWOBJ");
  expect_refused(pickle_of("}}b"), "BUILD");
  expect_refused(pickle_of("(ios\nsystem\n"), "INST");
  expect_refused(pickle_of("X\x02\x00\x00\x00osX\x06\x00\x00\x00system\x93"s), "STACK_GLOBAL");
  expect_refused(pickle_of("N2"), "DUP");
  // A persistent id that is not a storage.
  expect_refused(pickle_of("(X\x04\x00\x00\x00"s + "filetQ"), "BINPERSID");
  // A value that is not a tensor.
  expect_refused(pickle_of("K\x05"), "'w' is a int, not a tensor");
}

TEST(TorchCheckpoint, TensorsReachingPastTheirStorageAreRefused) {
  std::string p = pickle_of();
  p.replace(p.find("K\x00K\x03\x85"s), 5, "K\x01K\x03\x85"s);  // offset 1
  expect_refused(p, "reaches past its storage");
  // The storage entry shorter than its numel.
  EXPECT_THROW(from_zip({{"a/data.pkl", pickle_of()}, {"a/data/0", floats({1, 2})}}), FormatError);
  EXPECT_THROW(from_zip({{"a/data.pkl", pickle_of()}}), FormatError);  // no storage entry
}

TEST(TorchCheckpoint, TruncatedCorruptAndForeignArchivesAreRefused) {
  const std::vector<uint8_t> good =
      make_zip({{"a/data.pkl", pickle_of()}, {"a/data/0", floats({1, 2, 3})}});
  std::mt19937 rng(35);
  for (int i = 0; i < 40; ++i) {
    const size_t cut = rng() % good.size();
    EXPECT_THROW(io::TorchCheckpoint::from_bytes(
                     std::vector<uint8_t>(good.begin(), good.begin() + cut), "cut.pt"),
                 FormatError)
        << cut;
  }
  std::vector<uint8_t> flipped = good;
  flipped[good.size() / 3] ^= 0x40;  // inside the data: the CRC catches it
  EXPECT_THROW(io::TorchCheckpoint::from_bytes(flipped, "flip.pt"), FormatError);
  EXPECT_THROW(from_zip({{"a/version", "3\n"}}), FormatError);  // no data.pkl
}

TEST(TorchCheckpoint, NvidiaFolderGivesTheSafetensorsBits) {
  std::mt19937 rng(2035);
  std::normal_distribution<float> nd(-4.0f, 2.0f);
  Tensor mel = Tensor::empty({1, 100, 24});
  for (int64_t i = 0; i < mel.numel(); ++i) mel.data<float>()[i] = nd(rng);
  const auto folder = AudioModel::load(test::fixture_path("bigvgan_nvidia_folder"));
  const auto st = AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"));
  const Tensor a = folder.run(mel), b = st.run(mel);
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
  // The registry takes the folder too (serve --model, AudioModel::load).
  const AudioModel m = AudioModel::load(test::fixture_path("bigvgan_nvidia_folder"));
  EXPECT_EQ(m.model(), "nvidia-bigvgan");
  const Tensor c = m.run(mel);
  EXPECT_EQ(std::memcmp(c.raw(), b.raw(), b.nbytes()), 0);
}

TEST(TorchCheckpoint, FolderWithoutWeightsNamesTheConverter) {
  const std::string dir = test::scratch_dir();
  std::ofstream(fs::path(dir) / "config.json") << "{}";
  try {
    AudioModel::load(dir);
    FAIL();
  } catch (const InvalidArgument& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("bigvgan_generator.pt"), std::string::npos) << w;
    EXPECT_NE(w.find("tools/convert_checkpoint.py"), std::string::npos) << w;
  }
  EXPECT_THROW(AudioModel::load(dir), InvalidArgument);
}

}  // namespace
}  // namespace meshnn
