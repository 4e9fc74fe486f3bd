#include "meshnn/io/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "io/file_util.h"

namespace meshnn::io {

namespace {

// The reference implementation refuses headers above 100 MB; so do we (a bogus length would
// otherwise make us parse a whole multi-GB file as JSON).
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypes[] = {{"F32", DType::f32}, {"BF16", DType::bf16},   {"F16", DType::f16},
                                 {"F64", DType::f64}, {"I64", DType::i64},     {"I32", DType::i32},
                                 {"U8", DType::u8},   {"BOOL", DType::boolean}};

const char* st_dtype_name(DType dt) {
  for (const auto& d : kDTypes)
    if (d.dtype == dt) return d.name;
  return "?";
}

// Length of the valid UTF-8 prefix of [p, p+n) (rejects overlongs, surrogates, > U+10FFFF).
size_t utf8_valid_prefix(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t c = p[i];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
      min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
      min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
      min = 0x10000;
    } else
      return i;
    if (n - i < len) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return n;
}

}  // namespace

struct SafetensorsFile::Impl {
  struct Entry {
    DType dtype;
    Shape shape;
    uint64_t begin, end;  // relative to data_start
  };
  std::string path;
  std::shared_ptr<ByteSource> bytes;
  uint64_t data_start = 0;  // 8 + header length
  std::map<std::string, Entry> entries;
  std::map<std::string, std::string> metadata;

  void parse();
  // The stages of parse(), in order (defined beside it).
  nlohmann::json read_header();
  Entry parse_entry(const std::string& key, const nlohmann::json& info,
                    const std::function<uint64_t()>& off);
  void check_no_overlap() const;
  const Entry& entry(const std::string& key) const;
};

// Layout: [0, 8) u64 LE header length N | [8, 8+N) JSON | [8+N, size) tensor data.
void SafetensorsFile::Impl::parse() {
  const nlohmann::json header = read_header();
  const std::string_view text(reinterpret_cast<const char*>(bytes->data + 8), data_start - 8);
  // Best-effort offset of a key inside the header (exact for names without JSON escapes).
  auto key_offset = [&](const std::string& key) -> uint64_t {
    const size_t at = text.find("\"" + key + "\"");
    return 8 + (at == std::string_view::npos ? 0 : at);
  };
  for (const auto& item : header.items()) {
    // Named references, not a structured binding: clang 14 cannot capture bindings in lambdas.
    const std::string& key = item.key();
    const nlohmann::json& info = item.value();
    // Only computed on failure: a search per key would make big headers quadratic.
    const std::function<uint64_t()> off = [&] { return key_offset(key); };
    if (key == "__metadata__") {
      if (!info.is_object()) format_fail(path, off(), "__metadata__ is not an object");
      for (const auto& kv : info.items()) {
        if (!kv.value().is_string())
          format_fail(path, off(), "__metadata__ value for '", kv.key(), "' is not a string");
        metadata[kv.key()] = kv.value().get<std::string>();
      }
      continue;
    }
    entries.emplace(key, parse_entry(key, info, off));
  }
  check_no_overlap();
}

// The length prefix and the JSON header of the whole file → the header object; sets data_start.
nlohmann::json SafetensorsFile::Impl::read_header() {
  const uint8_t* p = bytes->data;
  const uint64_t size = bytes->size;
  if (size < 8) format_fail(path, 0, "truncated: ", size, " bytes, need 8 for the header length");
  // A PyTorch checkpoint (torch.save: a zip archive, or a legacy pickle) is the common mistake:
  // say so instead of reading its first bytes as a header length.
  // (A safetensors header is JSON: byte 8 is '{'.)
  const uint8_t* b = bytes->data;
  const bool json_at_8 = size > 8 && b[8] == '{';
  if (!json_at_8 &&
      ((b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) || (b[0] == 0x80 && b[1] <= 5)))
    format_fail(path, 0, "this is a PyTorch checkpoint (torch.save ",
                b[0] == 'P' ? "zip archive" : "pickle",
                "), not safetensors: convert it with tools/convert_checkpoint.py");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | p[i];
  if (n > kMaxHeaderBytes)
    format_fail(path, 0, "header length ", n, " exceeds the ", kMaxHeaderBytes, "-byte limit");
  if (n > size - 8)
    format_fail(path, 0, "header length ", n, " runs past the end of the file (", size, " bytes)");
  data_start = 8 + n;
  const size_t valid = utf8_valid_prefix(p + 8, n);
  if (valid != n) format_fail(path, 8 + valid, "header is not valid UTF-8");

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(p + 8, p + 8 + n);
  } catch (const nlohmann::json::parse_error& e) {
    format_fail(path, 8 + std::min<uint64_t>(e.byte > 0 ? e.byte - 1 : 0, n),
                "header is not valid JSON: ", e.what());
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406 for a number literal beyond double range; no position is known.
    format_fail(path, 8, "header is not valid JSON: ", e.what());
  }
  if (!header.is_object()) format_fail(path, 8, "header is not a JSON object");
  return header;
}

// One tensor's header entry → its dtype, shape and byte range, each checked against the file;
// off() is the entry's offset in the file, for the error.
SafetensorsFile::Impl::Entry SafetensorsFile::Impl::parse_entry(
    const std::string& key, const nlohmann::json& info, const std::function<uint64_t()>& off) {
  const uint64_t data_size = bytes->size - data_start;
  auto bad = [&](const auto&... parts) {
    format_fail(path, off(), "tensor '", key, "': ", parts...);
  };
  if (!info.is_object()) bad("entry is not an object");
  const auto dt = info.find("dtype");
  const auto sh = info.find("shape");
  const auto of = info.find("data_offsets");
  if (dt == info.end() || sh == info.end() || of == info.end())
    bad("entry needs dtype, shape and data_offsets");
  if (!dt->is_string()) bad("dtype is not a string");
  const std::string dname = dt->get<std::string>();
  const auto known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                  [&](const DTypeName& d) { return dname == d.name; });
  if (known == std::end(kDTypes)) bad("unknown dtype '", dname, "'");

  if (!sh->is_array()) bad("shape is not an array");
  if (sh->size() > static_cast<size_t>(kMaxRank)) bad("rank ", sh->size(), " exceeds ", kMaxRank);
  Entry e{known->dtype, {}, 0, 0};
  uint64_t numel = 1;
  for (const auto& d : *sh) {
    // is_number_unsigned: a non-negative integer literal (rejects -1, 2.5, "3", true).
    // (Errors print type names, never dump(): dump() recurses and the value may nest deeply.)
    if (!d.is_number_unsigned())
      bad("shape entry ", e.shape.size(), " (", d.is_number() ? "number" : d.type_name(),
          ") is not a non-negative integer");
    const uint64_t v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, v, &numel))
      bad("shape overflows at entry ", e.shape.size(), " (", v, ")");
    e.shape.push_back(static_cast<int64_t>(v));
  }
  uint64_t nbytes = 0;
  if (numel > static_cast<uint64_t>(INT64_MAX) ||
      __builtin_mul_overflow(numel, dtype_size(e.dtype), &nbytes))
    bad("shape ", shape_str(e.shape), " overflows");

  if (!of->is_array() || of->size() != 2 || !(*of)[0].is_number_unsigned() ||
      !(*of)[1].is_number_unsigned())
    bad("data_offsets must be [begin, end] with non-negative integers");
  e.begin = (*of)[0].get<uint64_t>();
  e.end = (*of)[1].get<uint64_t>();
  if (e.begin > e.end) bad("data_offsets begin ", e.begin, " > end ", e.end);
  if (e.end > data_size)
    format_fail(path, data_start + e.begin, "tensor '", key, "': data_offsets [", e.begin, ", ",
                e.end, "] run past the end of the data (", data_size, " bytes)");
  if (e.end - e.begin != nbytes)
    format_fail(path, data_start + e.begin, "tensor '", key, "': ", e.end - e.begin,
                " bytes for shape ", shape_str(e.shape), " ", dname, " (needs ", nbytes, ")");
  return e;
}

// Tensors must not share bytes (a writer bug or a crafted file aliasing two weights).
void SafetensorsFile::Impl::check_no_overlap() const {
  std::vector<std::pair<const std::string*, const Entry*>> by_begin;
  for (const auto& [k, e] : entries)
    if (e.end > e.begin) by_begin.emplace_back(&k, &e);
  std::sort(by_begin.begin(), by_begin.end(),
            [](const auto& a, const auto& b) { return a.second->begin < b.second->begin; });
  for (size_t i = 1; i < by_begin.size(); ++i)
    if (by_begin[i].second->begin < by_begin[i - 1].second->end)
      format_fail(path, data_start + by_begin[i].second->begin, "tensor '", *by_begin[i].first,
                  "' overlaps tensor '", *by_begin[i - 1].first, "'");
}

const SafetensorsFile::Impl::Entry& SafetensorsFile::Impl::entry(const std::string& key) const {
  const auto it = entries.find(key);
  if (it == entries.end())
    throw WeightError(detail::concat("missing tensor '", key, "' in ", path));
  return it->second;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->bytes = ByteSource::map_file(path);
  impl->parse();
  return SafetensorsFile(std::move(impl));
}

SafetensorsFile SafetensorsFile::from_bytes(std::vector<uint8_t> bytes, std::string name) {
  auto impl = std::make_shared<Impl>();
  impl->path = std::move(name);
  impl->bytes = ByteSource::from_vector(std::move(bytes));
  impl->parse();
  return SafetensorsFile(std::move(impl));
}

bool SafetensorsFile::contains(const std::string& key) const {
  return impl_->entries.count(key) > 0;
}

std::vector<std::string> SafetensorsFile::keys() const {
  std::vector<std::string> out;
  for (const auto& kv : impl_->entries) out.push_back(kv.first);
  return out;  // std::map order is sorted
}

Tensor SafetensorsFile::get(const std::string& key) const {
  const Impl::Entry& e = impl_->entry(key);
  uint8_t* src = impl_->bytes->data + impl_->data_start + e.begin;
  if (reinterpret_cast<uintptr_t>(src) % dtype_size(e.dtype) == 0) {
    // The view's keep-alive is the byte source itself (the mapping), not the parsed header.
    return Tensor::view(src, e.shape, e.dtype, impl_->bytes);
  }
  // Misaligned (e.g. after an odd-sized U8 tensor): typed loads would be UB, so copy.
  Tensor t = Tensor::empty(e.shape, e.dtype);
  if (t.nbytes()) std::memcpy(t.raw(), src, t.nbytes());
  return t;
}

DType SafetensorsFile::dtype(const std::string& key) const { return impl_->entry(key).dtype; }
const Shape& SafetensorsFile::shape(const std::string& key) const {
  return impl_->entry(key).shape;
}
const std::map<std::string, std::string>& SafetensorsFile::metadata() const {
  return impl_->metadata;
}
const std::string& SafetensorsFile::path() const { return impl_->path; }

void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t off = 0;
  for (const auto& [key, t] : tensors) {
    MESHNN_CHECK(key != "__metadata__", "save_safetensors: '__metadata__' is reserved");
    MESHNN_CHECK(t.defined(), "save_safetensors: tensor '", key, "' is undefined");
    header[key] = {{"dtype", st_dtype_name(t.dtype())},
                   {"shape", t.shape()},
                   {"data_offsets", {off, off + t.nbytes()}}};
    off += t.nbytes();
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string h = header.dump();  // compact, keys sorted (std::map) like st.py
  h.append((8 - h.size() % 8) % 8, ' ');

  write_output(path, [&](const std::string& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw BackendError(detail::concat(tmp, ": cannot open for writing"));
    uint8_t len[8];
    for (int i = 0; i < 8; ++i)
      len[i] = static_cast<uint8_t>(static_cast<uint64_t>(h.size()) >> (8 * i));
    bool ok = std::fwrite(len, 1, 8, f) == 8 && std::fwrite(h.data(), 1, h.size(), f) == h.size();
    for (const auto& kv : tensors)
      if (ok && kv.second.nbytes())
        ok = std::fwrite(kv.second.raw(), 1, kv.second.nbytes(), f) == kv.second.nbytes();
    const int err = errno;
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed)
      throw BackendError(detail::concat(path, ": write failed: ", std::strerror(ok ? errno : err)));
  });
}

}  // namespace meshnn::io
