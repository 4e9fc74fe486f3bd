#include "meshnn/io/npy.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "io/file_util.h"
#include "io/npy_header.h"

namespace meshnn::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes

struct Descr {
  const char* text;
  DType dtype;
};
// numpy writes '|' for one-byte types and '<' for little-endian multi-byte types.
constexpr Descr kDescrs[] = {{"<f4", DType::f32},    {"<f8", DType::f64}, {"<f2", DType::f16},
                             {"<i8", DType::i64},    {"<i4", DType::i32}, {"|u1", DType::u8},
                             {"|b1", DType::boolean}};

// Parser for the header dict literal. Offsets in errors are absolute file offsets.
class HeaderParser {
 public:
  HeaderParser(const std::string& file, const char* p, size_t n, uint64_t base)
      : file_(file), p_(p), n_(n), base_(base) {}

  struct Result {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Result parse() {
    Result r;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (peek() != '}') {
      const uint64_t key_at = here();
      const std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) fail(key_at, "duplicate key 'descr'");
        have_descr = true;
        if (peek() != '\'' && peek() != '"')
          fail(here(), "descr is not a string (structured dtypes are not supported)");
        r.descr = string_literal();
      } else if (key == "fortran_order") {
        if (have_fortran) fail(key_at, "duplicate key 'fortran_order'");
        have_fortran = true;
        r.fortran_order = boolean();
      } else if (key == "shape") {
        if (have_shape) fail(key_at, "duplicate key 'shape'");
        have_shape = true;
        r.shape = tuple();
      } else {
        fail(key_at, "unexpected key '", key, "'");
      }
      skip_ws();
      if (peek() == ',') {
        ++i_;
        skip_ws();
      } else if (peek() != '}') {
        fail(here(), "expected ',' or '}' in the header dict");
      }
    }
    ++i_;  // '}'
    skip_ws();
    if (i_ != n_) fail(here(), "unexpected text after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
      fail(base_, "header dict needs 'descr', 'fortran_order' and 'shape'");
    return r;
  }

 private:
  template <class... A>
  [[noreturn]] void fail(uint64_t at, A&&... parts) const {
    format_fail(file_, at, std::forward<A>(parts)...);
  }
  uint64_t here() const { return base_ + i_; }
  char peek() const {
    if (i_ >= n_) fail(here(), "header dict ends early");
    return p_[i_];
  }
  void expect(char c) {
    if (peek() != c) fail(here(), "expected '", c, "' in the header dict");
    ++i_;
  }
  void skip_ws() {
    while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\n' || p_[i_] == '\t' || p_[i_] == '\r')) ++i_;
  }
  // 'text' or "text"; no escapes (numpy never writes them for these keys and values).
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail(here(), "expected a quoted string in the header dict");
    const size_t start = ++i_;
    while (peek() != q) {
      if (p_[i_] == '\\') fail(here(), "escapes are not supported in the header dict");
      ++i_;
    }
    ++i_;
    return std::string(p_ + start, i_ - 1 - start);
  }
  bool boolean() {
    if (n_ - i_ >= 4 && std::memcmp(p_ + i_, "True", 4) == 0) {
      i_ += 4;
      return true;
    }
    if (n_ - i_ >= 5 && std::memcmp(p_ + i_, "False", 5) == 0) {
      i_ += 5;
      return false;
    }
    fail(here(), "fortran_order is not True or False");
  }
  // (d0, d1, ...) with non-negative decimal integers; (n,) and () allowed.
  Shape tuple() {
    Shape s;
    expect('(');
    skip_ws();
    uint64_t numel = 1;
    while (peek() != ')') {
      const uint64_t at = here();
      if (peek() < '0' || peek() > '9') fail(at, "shape entry is not a non-negative integer");
      uint64_t v = 0;
      while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p_[i_] - '0', &v) ||
            v > static_cast<uint64_t>(INT64_MAX))
          fail(at, "shape entry overflows");
        ++i_;
      }
      if (s.size() == static_cast<size_t>(kMaxRank)) fail(at, "rank exceeds ", kMaxRank);
      if (__builtin_mul_overflow(numel, v, &numel) || numel > static_cast<uint64_t>(INT64_MAX))
        fail(at, "shape overflows");
      s.push_back(static_cast<int64_t>(v));
      skip_ws();
      if (peek() == ',') {
        ++i_;
        skip_ws();
      } else if (peek() != ')') {
        fail(here(), "expected ',' or ')' in the shape tuple");
      }
    }
    ++i_;
    return s;
  }

  const std::string& file_;
  const char* p_;
  size_t n_;
  uint64_t base_;
  size_t i_ = 0;
};

}  // namespace

uint64_t npy_header_end(const uint8_t* data, size_t avail, uint64_t size, const std::string& name) {
  if (size < 10) format_fail(name, 0, "truncated: ", size, " bytes, need at least 10");
  MESHNN_CHECK(avail >= std::min<uint64_t>(size, 12), "npy_header_end: need the first 12 bytes");
  if (std::memcmp(data, kMagic, 6) != 0) format_fail(name, 0, "not a .npy file (bad magic)");
  const uint8_t major = data[6], minor = data[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    format_fail(name, 6, "unsupported .npy version ", int(major), ".", int(minor));
  uint64_t hlen, hstart;
  if (major == 1) {
    hlen = data[8] | (uint64_t{data[9]} << 8);
    hstart = 10;
  } else {
    if (size < 12) format_fail(name, 8, "truncated header length");
    hlen = data[8] | (uint64_t{data[9]} << 8) | (uint64_t{data[10]} << 16) |
           (uint64_t{data[11]} << 24);
    hstart = 12;
  }
  if (hlen > size - hstart)
    format_fail(name, 8, "header length ", hlen, " runs past the end of the file (", size,
                " bytes)");
  return hstart + hlen;
}

NpyHeader parse_npy_header(const uint8_t* data, size_t avail, uint64_t size,
                           const std::string& name) {
  const uint64_t hend = npy_header_end(data, avail, size, name);
  MESHNN_CHECK(avail >= hend, "parse_npy_header: need the first ", hend, " bytes");
  const uint64_t hstart = data[6] == 1 ? 10 : 12;
  // 1.0/2.0 headers are latin-1, 3.0 UTF-8; every byte we accept is ASCII, so both are checked
  // by the parser's character rules.
  const auto hdr =
      HeaderParser(name, reinterpret_cast<const char*>(data + hstart), hend - hstart, hstart)
          .parse();

  const Descr* d = nullptr;
  for (const auto& c : kDescrs)
    if (hdr.descr == c.text) d = &c;
  if (!d) {
    const bool big = !hdr.descr.empty() && hdr.descr[0] == '>';
    const bool object = hdr.descr.find('O') != std::string::npos;
    format_fail(name, hstart, "unsupported descr '", hdr.descr, "'",
                big      ? " (big-endian data)"
                : object ? " (object arrays cannot be loaded)"
                         : "");
  }
  if (hdr.fortran_order)
    format_fail(name, hstart, "fortran_order True is not supported (save a C-contiguous array)");

  const uint64_t data_start = hend;
  const uint64_t numel = static_cast<uint64_t>(shape_numel(hdr.shape));  // overflow-checked above
  uint64_t nbytes;
  if (__builtin_mul_overflow(numel, dtype_size(d->dtype), &nbytes))
    format_fail(name, hstart, "shape ", shape_str(hdr.shape), " overflows");
  if (size - data_start != nbytes)
    format_fail(name, data_start, "data is ", size - data_start, " bytes, shape ",
                shape_str(hdr.shape), " ", hdr.descr, " needs ", nbytes);
  return NpyHeader{d->dtype, hdr.shape, data_start, nbytes};
}

Tensor load_npy_bytes(const uint8_t* data, size_t size, const std::string& name) {
  const NpyHeader h = parse_npy_header(data, size, size, name);
  Tensor t = Tensor::empty(h.shape, h.dtype);
  if (h.data_bytes) std::memcpy(t.raw(), data + h.data_offset, h.data_bytes);
  return t;
}

Tensor load_npy(const std::string& path) {
  const auto src = ByteSource::map_file(path);
  return load_npy_bytes(src->data, src->size, path);
}

std::vector<uint8_t> npy_bytes(const Tensor& t) {
  MESHNN_CHECK(t.defined(), "save_npy: undefined tensor");
  const char* descr = nullptr;
  for (const auto& c : kDescrs)
    if (c.dtype == t.dtype()) descr = c.text;
  if (!descr)
    throw Unsupported(detail::concat("save_npy: ", dtype_name(t.dtype()),
                                     " has no numpy dtype; convert with .to(DType::f32)"));
  // Python's tuple repr: (), (5,), (2, 3).
  std::string shape = "(";
  for (int i = 0; i < t.rank(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  shape += t.rank() == 1 ? ",)" : ")";
  // numpy.save's exact text (numpy 1.24 format._write_array_header): the dict, then spare spaces
  // so the first dim can grow to 21 digits in place, then padding so that magic + length +
  // header + '\n' is a multiple of 64 (a full 64 when already aligned, as numpy does).
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (t.rank() > 0) header.append(21 - std::to_string(t.shape()[0]).size(), ' ');
  // Rank ≤ kMaxRank keeps the header far below 64 KiB, so version 1.0 (u16 length) always fits.
  constexpr size_t prefix = 10;
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out(prefix + header.size() + t.nbytes());
  std::memcpy(out.data(), kMagic, 6);
  out[6] = 1;
  out[7] = 0;
  out[8] = static_cast<uint8_t>(header.size());
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (t.nbytes()) std::memcpy(out.data() + prefix + header.size(), t.raw(), t.nbytes());
  return out;
}

void save_npy(const std::string& path, const Tensor& t) {
  const std::vector<uint8_t> bytes = npy_bytes(t);
  write_bytes_output(path, bytes.data(), bytes.size());
}

}  // namespace meshnn::io
