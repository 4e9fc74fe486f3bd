#include "meshnn/io/npy.h"

#include <gtest/gtest.h>

#include <cstdint>
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

// A .npy with the given version, header text (used verbatim) and data bytes.
std::vector<uint8_t> make_npy(int major, const std::string& header, size_t data_bytes) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::vector<uint8_t> b(prefix + header.size() + data_bytes, 0x5a);
  const char magic[] = "\x93NUMPY";
  for (int i = 0; i < 6; ++i) b[i] = static_cast<uint8_t>(magic[i]);
  b[6] = static_cast<uint8_t>(major);
  b[7] = 0;
  for (size_t i = 0; i < prefix - 8; ++i) b[8 + i] = static_cast<uint8_t>(header.size() >> (8 * i));
  for (size_t i = 0; i < header.size(); ++i) b[prefix + i] = static_cast<uint8_t>(header[i]);
  return b;
}

Tensor parse(const std::vector<uint8_t>& b) {
  return io::load_npy_bytes(b.data(), b.size(), "bad.npy");
}
Tensor parse(const std::string& header, size_t data_bytes, int major = 1) {
  return parse(make_npy(major, header, data_bytes));
}

TEST(Npy, RoundTripEveryDType) {
  const std::string dir = scratch_dir();
  uint32_t seed = 10;
  for (DType dt :
       {DType::f32, DType::f64, DType::f16, DType::i64, DType::i32, DType::u8, DType::boolean}) {
    for (const Shape& shape : {Shape{}, Shape{7}, Shape{3, 5}, Shape{2, 1, 4, 3}, Shape{0, 3}}) {
      const Tensor t = random_tensor(shape, dt, seed++);
      const std::string path = dir + "/t.npy";
      io::save_npy(path, t);
      const Tensor back = io::load_npy(path);
      EXPECT_TRUE(same_bytes(back, t)) << dtype_name(dt) << shape_str(shape);
      EXPECT_TRUE(back.owns_storage());
      EXPECT_EQ(slurp(path).size() % 64, t.nbytes() % 64);  // header padded to 64
    }
  }
}

TEST(Npy, Bf16IsUnsupported) { EXPECT_THROW(io::npy_bytes(Tensor({2}, DType::bf16)), Unsupported); }

TEST(Npy, ReadsNumpyWrittenFilesAndWritesIdenticalBytes) {
  const Tensor a = io::load_npy(fixture_path("io_sample_f32.npy"));
  ASSERT_EQ(a.shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.data<float>()[i], i * 0.5f - 1.f);
  const Tensor b = io::load_npy(fixture_path("io_sample_i64.npy"));
  ASSERT_EQ(b.shape(), (Shape{5}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b.data<int64_t>()[i], i * 3 - 7);
  const Tensor c = io::load_npy(fixture_path("io_sample_f64.npy"));
  ASSERT_EQ(c.shape(), Shape{});
  EXPECT_EQ(c.data<double>()[0], 2.5);
  EXPECT_EQ(io::npy_bytes(a), slurp(fixture_path("io_sample_f32.npy")));
  EXPECT_EQ(io::npy_bytes(b), slurp(fixture_path("io_sample_i64.npy")));
  EXPECT_EQ(io::npy_bytes(c), slurp(fixture_path("io_sample_f64.npy")));
}

TEST(Npy, Versions2And3AndLooseWhitespace) {
  for (int major : {1, 2, 3}) {
    const Tensor t =
        parse("{ \"descr\":'<i4','shape':(2,) , 'fortran_order' : False }\n", 8, major);
    EXPECT_EQ(t.shape(), Shape{2});
    EXPECT_EQ(t.data<int32_t>()[0], 0x5a5a5a5a);
  }
}

#define EXPECT_BAD(expr, ...) \
  EXPECT_TRUE(throws_format([&] { (void)(expr); }, "bad.npy", ##__VA_ARGS__))

const std::string kOk = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";

TEST(NpyMalformed, Truncated) {
  EXPECT_BAD(parse(std::vector<uint8_t>{0x93, 'N', 'U'}), "truncated");
  EXPECT_BAD(parse(std::vector<uint8_t>{}), "truncated");
}

TEST(NpyMalformed, BadMagic) {
  auto b = make_npy(1, kOk, 8);
  b[1] = 'X';
  EXPECT_BAD(parse(b), "magic");
}

TEST(NpyMalformed, UnsupportedVersion) {
  auto b = make_npy(1, kOk, 8);
  b[6] = 4;
  EXPECT_BAD(parse(b), "offset 6: unsupported .npy version 4.0");
}

TEST(NpyMalformed, HeaderLengthPastEof) {
  auto b = make_npy(2, kOk, 0);
  b[11] = 0x7f;
  EXPECT_BAD(parse(b), "past the end");
}

TEST(NpyMalformed, FortranOrder) {
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n", 16),
             "fortran_order");
}

TEST(NpyMalformed, BigEndian) {
  EXPECT_BAD(parse("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8), "big-endian");
}

TEST(NpyMalformed, ObjectDType) {
  EXPECT_BAD(parse("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }\n", 16), "object");
}

TEST(NpyMalformed, StructuredDType) {
  EXPECT_BAD(parse("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8),
             "structured");
}

TEST(NpyMalformed, MalformedDict) {
  EXPECT_BAD(parse("{'descr': '<f4', 'shape': (2,), }\n", 8),
             "needs 'descr', 'fortran_order' and 'shape'");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8),
             "unexpected key");
  EXPECT_BAD(parse("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}\n", 8), "expected ','");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8), "ends early");
  EXPECT_BAD(parse("['descr']\n", 8), "expected '{'");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}\n", 8),
             "True or False");
  EXPECT_BAD(parse("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n", 8),
             "duplicate");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x\n", 8),
             "after the header");
  EXPECT_BAD(parse("{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}\n", 8));
}

TEST(NpyMalformed, BadShape) {
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", 8),
             "non-negative integer");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }\n", 8),
             "expected ','");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': 2, }\n", 8), "expected '('");
  EXPECT_BAD(parse("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1), }\n", 4),
             "rank");
}

TEST(NpyMalformed, ShapeOverflow) {
  EXPECT_BAD(
      parse("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 8),
      "overflows");
  EXPECT_BAD(
      parse("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n", 8),
      "overflows");
  EXPECT_BAD(
      parse("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }\n", 8),
      "overflows");
}

TEST(NpyMalformed, DataSizeMismatch) {
  EXPECT_BAD(parse(kOk, 7), "needs 8");
  EXPECT_BAD(parse(kOk, 9), "needs 8");
}

TEST(Npy, LoadReportsPath) {
  const std::string path = scratch_dir() + "/short.npy";
  { std::ofstream(path, std::ios::binary) << "\x93NUMPY"; }
  EXPECT_TRUE(throws_format([&] { io::load_npy(path); }, path, "truncated"));
}

}  // namespace
}  // namespace meshnn::test
