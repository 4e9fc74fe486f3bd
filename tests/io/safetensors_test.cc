#include "meshnn/io/safetensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "meshnn/core/bf16.h"
#include "support/fixtures.h"

namespace meshnn::test {
namespace {

using io::SafetensorsFile;

// Builds a safetensors file from a raw header string and a data blob.
std::vector<uint8_t> make_file(const std::string& header, size_t data_bytes = 0,
                               uint64_t claimed_len = UINT64_MAX) {
  const uint64_t n = claimed_len == UINT64_MAX ? header.size() : claimed_len;
  // (Sized up front: g++ 12 -Warray-bounds misfires on insert() into a small vector.)
  std::vector<uint8_t> b(8 + header.size() + data_bytes);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(n >> (8 * i));
  for (size_t i = 0; i < header.size(); ++i) b[8 + i] = static_cast<uint8_t>(header[i]);
  for (size_t i = 0; i < data_bytes; ++i)
    b[8 + header.size() + i] = static_cast<uint8_t>(i * 7 + 1);
  return b;
}

SafetensorsFile parse(const std::string& header, size_t data_bytes = 0) {
  return SafetensorsFile::from_bytes(make_file(header, data_bytes), "bad.safetensors");
}

const DType kAllDTypes[] = {DType::f32, DType::bf16, DType::f16, DType::f64,
                            DType::i64, DType::i32,  DType::u8,  DType::boolean};

TEST(Safetensors, RoundTripEveryDType) {
  const std::string path = scratch_dir() + "/all.safetensors";
  std::map<std::string, Tensor> in;
  uint32_t seed = 1;
  for (DType dt : kAllDTypes)
    in[std::string("t_") + dtype_name(dt)] = random_tensor({3, 5}, dt, seed++);
  in["scalar"] = random_tensor({}, DType::f32, 77);
  in["empty"] = Tensor::empty({0, 4}, DType::f32);
  in["rank4"] = random_tensor({2, 1, 3, 2}, DType::f32, 78);
  io::save_safetensors(path, in, {{"format", "pt"}, {"note", "ünïcode"}});

  const SafetensorsFile f = SafetensorsFile::open(path);
  std::vector<std::string> expected_keys;
  for (const auto& kv : in) expected_keys.push_back(kv.first);
  EXPECT_EQ(f.keys(), expected_keys);
  for (const auto& [k, t] : in) {
    ASSERT_TRUE(f.contains(k));
    EXPECT_TRUE(same_bytes(f.get(k), t)) << k;
    EXPECT_EQ(f.dtype(k), t.dtype());
    EXPECT_EQ(f.shape(k), t.shape());
  }
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.metadata().at("note"), "ünïcode");
  EXPECT_EQ(f.path(), path);
}

TEST(Safetensors, HeaderIsEightByteAlignedAndNoMetadataWhenEmpty) {
  const std::string path = scratch_dir() + "/a.safetensors";
  io::save_safetensors(path, {{"x", random_tensor({3}, DType::u8, 3)}});
  const std::vector<uint8_t> b = [&] {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), {});
  }();
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[i];
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(b.size(), 8 + n + 3);
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_TRUE(f.metadata().empty());
}

TEST(Safetensors, GetIsZeroCopyViewInsideTheMapping) {
  const std::string path = scratch_dir() + "/v.safetensors";
  const Tensor a = random_tensor({4, 4}, DType::f32, 5);
  io::save_safetensors(path, {{"a", a}});
  Tensor v;
  {
    const SafetensorsFile f = SafetensorsFile::open(path);
    v = f.get("a");
    EXPECT_FALSE(v.owns_storage());
    const Tensor v2 = f.get("a");
    EXPECT_EQ(v.raw(), v2.raw());  // same bytes of the same mapping
  }
  // The file object is gone; the view keeps the mapping alive.
  EXPECT_TRUE(same_bytes(v, a));
  // Copy-on-write mapping: writing into a view never changes the file.
  static_cast<float*>(v.raw())[0] = 123.f;
  EXPECT_TRUE(same_bytes(SafetensorsFile::open(path).get("a"), a));
}

TEST(Safetensors, MisalignedOffsetIsCopied) {
  // u8[3] first, so the f32 tensor starts at data offset 3 (not 4-aligned).
  const std::string path = scratch_dir() + "/m.safetensors";
  const Tensor b = random_tensor({3}, DType::u8, 6);
  const Tensor c = random_tensor({5}, DType::f32, 7);
  io::save_safetensors(path, {{"b", b}, {"c", c}});
  const SafetensorsFile f = SafetensorsFile::open(path);
  const Tensor cb = f.get("c");
  EXPECT_TRUE(cb.owns_storage());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cb.raw()) % kTensorAlignment, 0u);
  EXPECT_TRUE(same_bytes(cb, c));
  EXPECT_FALSE(f.get("b").owns_storage());  // u8 is always aligned
}

TEST(Safetensors, FromBytesAndCheapCopies) {
  const SafetensorsFile f = parse(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 2);
  const SafetensorsFile g = f;  // shares the parsed file
  EXPECT_EQ(g.get("x").data<uint8_t>()[1], 8);
  EXPECT_EQ(g.path(), "bad.safetensors");
}

TEST(Safetensors, MissingKeyIsWeightErrorNamingKeyAndFile) {
  const SafetensorsFile f = parse(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 2);
  try {
    f.get("decoder.conv_in.weight");
    FAIL() << "no throw";
  } catch (const WeightError& e) {
    EXPECT_NE(std::string(e.what()).find("decoder.conv_in.weight"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bad.safetensors"), std::string::npos);
  }
}

// ---- malformed files: FormatError naming the file and an offset --------------------------------

#define EXPECT_BAD(expr, ...) \
  EXPECT_TRUE(throws_format([&] { (void)(expr); }, "bad.safetensors", ##__VA_ARGS__))

TEST(SafetensorsMalformed, TruncatedHeaderLength) {
  EXPECT_BAD(SafetensorsFile::from_bytes({1, 2, 3}, "bad.safetensors"), "truncated");
  EXPECT_BAD(SafetensorsFile::from_bytes({}, "bad.safetensors"), "truncated");
}

TEST(SafetensorsMalformed, HeaderLengthPastEof) {
  EXPECT_BAD(SafetensorsFile::from_bytes(make_file("{}", 0, 100), "bad.safetensors"),
             "past the end");
}

TEST(SafetensorsMalformed, HeaderLengthAbsurd) {
  EXPECT_BAD(SafetensorsFile::from_bytes(make_file("{}", 0, uint64_t{1} << 62), "bad.safetensors"),
             "limit");
  EXPECT_BAD(SafetensorsFile::from_bytes(make_file("{}", 0, UINT64_MAX - 1), "bad.safetensors"),
             "limit");
}

TEST(SafetensorsMalformed, HeaderNotUtf8) {
  EXPECT_BAD(parse("{\"a\xff\":1}"), "offset 11: header is not valid UTF-8");
  EXPECT_BAD(parse("{\"\xc0\xaf\":1}"), "UTF-8");  // overlong '/'
}

TEST(SafetensorsMalformed, HeaderNotJson) {
  EXPECT_BAD(parse("{\"a\": }"), "not valid JSON");
  EXPECT_BAD(parse("{\"a\": {"), "not valid JSON");
  EXPECT_BAD(parse(""), "not valid JSON");
}

// Found by safetensors_fuzz: nlohmann throws out_of_range (not parse_error) for huge numbers.
TEST(SafetensorsMalformed, NumberBeyondDoubleRange) {
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[1e999],"data_offsets":[0,1]}})", 1),
             "not valid JSON");
}

TEST(SafetensorsMalformed, DeeplyNestedShapeDoesNotOverflowTheStack) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[)" + deep + R"(],"data_offsets":[0,1]}})", 1),
             "not a non-negative integer");
}

TEST(SafetensorsMalformed, HeaderNotObject) {
  EXPECT_BAD(parse("[1, 2]"), "not a JSON object");
  EXPECT_BAD(parse("42"), "not a JSON object");
}

TEST(SafetensorsMalformed, EntryMissingFields) {
  EXPECT_BAD(parse(R"({"x":{"shape":[1],"data_offsets":[0,4]}})", 4), "'x'");
  EXPECT_BAD(parse(R"({"x":{"dtype":"F32","data_offsets":[0,4]}})", 4),
             "dtype, shape and data_offsets");
  EXPECT_BAD(parse(R"({"x":{"dtype":"F32","shape":[1]}})", 4), "data_offsets");
  EXPECT_BAD(parse(R"({"x":7})", 4), "not an object");
  EXPECT_BAD(parse(R"({"x":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4),
             "dtype is not a string");
}

TEST(SafetensorsMalformed, UnknownDType) {
  EXPECT_BAD(parse(R"({"x":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", 1),
             "unknown dtype");
}

TEST(SafetensorsMalformed, BadShapeEntries) {
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1),
             "non-negative integer");
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1),
             "non-negative integer");
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":["1"],"data_offsets":[0,1]}})", 1),
             "non-negative integer");
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":7,"data_offsets":[0,1]}})", 1), "not an array");
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[1,1,1,1,1,1,1],"data_offsets":[0,1]}})", 1),
             "rank");
}

TEST(SafetensorsMalformed, ShapeOverflow) {
  EXPECT_BAD(
      parse(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4),
      "overflows");
  EXPECT_BAD(
      parse(R"({"x":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8]}})", 8),
      "overflows");
  EXPECT_BAD(
      parse(R"({"x":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,8]}})", 8),
      "overflows");
}

TEST(SafetensorsMalformed, DataOffsetsOutOfRange) {
  EXPECT_BAD(parse(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "past the end");
  EXPECT_BAD(
      parse(
          R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,18446744073709551615]}})",
          4),
      "past the end");
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[-1,0]}})", 4), "data_offsets");
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 4), "data_offsets");
}

TEST(SafetensorsMalformed, BeginAfterEnd) {
  EXPECT_BAD(parse(R"({"x":{"dtype":"U8","shape":[0],"data_offsets":[4,2]}})", 4),
             "begin 4 > end 2");
}

TEST(SafetensorsMalformed, OverlappingTensors) {
  EXPECT_BAD(parse(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                   R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                   12),
             "overlaps");
}

TEST(SafetensorsMalformed, ByteCountMismatch) {
  EXPECT_BAD(parse(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 8), "needs 8");
}

TEST(SafetensorsMalformed, MetadataNotStrings) {
  EXPECT_BAD(parse(R"({"__metadata__":{"a":1}})"), "__metadata__");
  EXPECT_BAD(parse(R"({"__metadata__":[1]})"), "__metadata__");
}

TEST(SafetensorsMalformed, OffsetPointsAtTheKey) {
  // The entry error names the byte offset of the key inside the file (8 + position in header).
  EXPECT_BAD(parse(R"({"ok":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"bad":{"dtype":"X"}})"),
             "offset 62:");
}

TEST(Safetensors, OpenReportsFilePath) {
  const std::string path = scratch_dir() + "/short.safetensors";
  { std::ofstream(path, std::ios::binary) << "abc"; }
  EXPECT_TRUE(throws_format([&] { SafetensorsFile::open(path); }, path, "truncated"));
  EXPECT_THROW(SafetensorsFile::open(path + ".missing"), BackendError);
}

// tests/fixtures/io_roundtrip.safetensors, written by tools/goldens/gen_io.py (torch + st.py);
// the values are recomputed here from the same arange formulas.
TEST(SafetensorsFixture, TorchWrittenValues) {
  const auto t = load_fixture("io_roundtrip.safetensors");
  ASSERT_EQ(t.size(), 8u);
  auto expect = [&](const std::string& key, DType dt, const Shape& shape) -> const Tensor& {
    const Tensor& x = t.at(key);
    EXPECT_EQ(x.dtype(), dt) << key;
    EXPECT_EQ(x.shape(), shape) << key;
    return x;
  };
  const Tensor& a = expect("a.f32", DType::f32, {2, 3, 4});
  for (int i = 0; i < 24; ++i) EXPECT_EQ(a.data<float>()[i], i * 0.25f - 3.f);
  const Tensor& b = expect("b.bf16", DType::bf16, {4, 8});
  for (int i = 0; i < 32; ++i) EXPECT_EQ(to_f32(b.data<bf16>()[i]), i * 0.125f - 2.f);
  const Tensor& c = expect("c.f16", DType::f16, {5});
  const Tensor c32 = c.to(DType::f32);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c32.data<float>()[i], i * 0.5f - 1.f);
  const Tensor& d = expect("d.f64", DType::f64, {3, 3});
  for (int i = 0; i < 9; ++i) EXPECT_EQ(d.data<double>()[i], i / 3.0);
  const Tensor& e = expect("e.i64", DType::i64, {6});
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(e.data<int64_t>()[i], i * int64_t{1000000007} - (int64_t{1} << 40));
  const Tensor& f = expect("f.i32", DType::i32, {2, 2});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f.data<int32_t>()[i], i * -7 + 3);
  const Tensor& g = expect("g.u8", DType::u8, {7});
  for (int i = 0; i < 7; ++i) EXPECT_EQ(g.data<uint8_t>()[i], i * 37 % 256);
  const Tensor& h = expect("h.bool", DType::boolean, {5});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(static_cast<const uint8_t*>(h.raw())[i], i % 2);

  const auto meta = open_fixture("io_roundtrip.safetensors").metadata();
  EXPECT_EQ(meta.at("format"), "pt");
  EXPECT_EQ(meta.at("generator"), "gen_io.py");
}

// Our writer reproduces st.py byte for byte (same key order, separators, padding).
TEST(SafetensorsFixture, WriterMatchesStPyBytes) {
  const io::SafetensorsFile f = open_fixture("io_roundtrip.safetensors");
  std::map<std::string, Tensor> tensors;
  for (const auto& k : f.keys()) tensors[k] = f.get(k);
  const std::string path = scratch_dir() + "/again.safetensors";
  io::save_safetensors(path, tensors, f.metadata());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(slurp(path), slurp(f.path()));
}

}  // namespace
}  // namespace meshnn::test
