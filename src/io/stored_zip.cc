#include "io/stored_zip.h"

#include <array>

namespace meshnn::io {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint64_t kEndSize = 22, kLocator64Size = 20, kEnd64Size = 56;
constexpr uint64_t kCentralSize = 46, kLocalSize = 30;
constexpr uint64_t kMaxComment = 0xffff;

uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::array<uint32_t, 256> crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

}  // namespace

uint32_t crc32(const uint8_t* p, uint64_t n) {
  static const std::array<uint32_t, 256> table = crc_table();
  uint32_t c = 0xffffffffu;
  for (uint64_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

StoredZip::StoredZip(std::shared_ptr<ByteSource> bytes, std::string path)
    : bytes_(std::move(bytes)), path_(std::move(path)) {
  parse();
}

// → the offset of the central directory; its entry count and byte size in *count, *size.
// Layout at the end of the file: [zip64 end record, zip64 locator (20 bytes)] end record
// (22 bytes + comment). The zip64 records are read when a field of the end record is saturated.
uint64_t StoredZip::central_directory(uint64_t* count, uint64_t* size) const {
  const uint8_t* p = bytes_->data;
  const uint64_t n = bytes_->size;
  if (n < kEndSize)
    format_fail(path_, 0, "truncated: ", n, " bytes is too short for a zip archive");
  // The end record is the last signature within the comment's reach of the end.
  uint64_t at = n - kEndSize;
  const uint64_t lowest = at > kMaxComment ? at - kMaxComment : 0;
  while (le(p + at, 4) != kEndSig || at + kEndSize + le(p + at + 20, 2) != n) {
    if (at == lowest)
      format_fail(path_, n, "no zip end-of-central-directory record (truncated or not a zip)");
    --at;
  }
  if (le(p + at + 4, 2) != 0 || le(p + at + 6, 2) != 0)
    format_fail(path_, at, "multi-disk zip archives are not supported");
  *count = le(p + at + 10, 2);
  *size = le(p + at + 12, 4);
  uint64_t offset = le(p + at + 16, 4);
  if (*count == 0xffff || *size == 0xffffffff || offset == 0xffffffff) {
    if (at < kLocator64Size || le(p + at - kLocator64Size, 4) != kLocator64Sig)
      format_fail(path_, at, "zip64 fields without a zip64 end-of-directory locator");
    const uint64_t rec = le(p + at - kLocator64Size + 8, 8);
    if (rec > at - kLocator64Size || at - kLocator64Size - rec < kEnd64Size ||
        le(p + rec, 4) != kEnd64Sig)
      format_fail(path_, at - kLocator64Size, "bad zip64 end-of-directory offset ", rec);
    *count = le(p + rec + 32, 8);
    *size = le(p + rec + 40, 8);
    offset = le(p + rec + 48, 8);
  }
  if (offset > n || *size > n - offset)
    format_fail(path_, at, "central directory [", offset, ", +", *size,
                ") runs past the end of the file (", n, " bytes)");
  if (*count > *size / kCentralSize)
    format_fail(path_, at, *count, " entries cannot fit a ", *size, "-byte central directory");
  return offset;
}

void StoredZip::parse() {
  uint64_t count = 0, size = 0;
  uint64_t at = central_directory(&count, &size);
  const uint64_t end = at + size;
  for (uint64_t i = 0; i < count; ++i) parse_entry(&at, end);
}

// One central directory entry at *at (advanced past it), its local header checked.
void StoredZip::parse_entry(uint64_t* at, uint64_t end) {
  const uint8_t* p = bytes_->data;
  const uint64_t n = bytes_->size;
  const uint64_t c = *at;
  if (end - c < kCentralSize || le(p + c, 4) != kCentralSig)
    format_fail(path_, c, "bad central directory entry");
  const uint64_t flags = le(p + c + 8, 2), method = le(p + c + 10, 2);
  Entry e;
  e.crc = static_cast<uint32_t>(le(p + c + 16, 4));
  uint64_t csize = le(p + c + 20, 4), usize = le(p + c + 24, 4);
  const uint64_t name_len = le(p + c + 28, 2), extra_len = le(p + c + 30, 2);
  const uint64_t comment_len = le(p + c + 32, 2);
  uint64_t local = le(p + c + 42, 4);
  if (end - c - kCentralSize < name_len + extra_len + comment_len)
    format_fail(path_, c, "central directory entry runs past the directory");
  const std::string name(reinterpret_cast<const char*>(p + c + kCentralSize), name_len);
  // The zip64 extra field (id 1) holds, in order, the sizes and offset that are saturated.
  const uint8_t* x = p + c + kCentralSize + name_len;
  for (uint64_t k = 0; k + 4 <= extra_len;) {
    const uint64_t id = le(x + k, 2), len = le(x + k + 2, 2);
    if (k + 4 + len > extra_len) format_fail(path_, c, "entry '", name, "': bad extra field");
    uint64_t f = k + 4;
    for (uint64_t* v : {&usize, &csize, &local}) {
      if (id != 1 || *v != 0xffffffff) continue;
      if (f + 8 > k + 4 + len) format_fail(path_, c, "entry '", name, "': short zip64 field");
      *v = le(x + f, 8);
      f += 8;
    }
    k += 4 + len;
  }
  if (flags & 1) format_fail(path_, c, "entry '", name, "' is encrypted");
  if (method != 0 || csize != usize)
    format_fail(path_, c, "entry '", name, "' is compressed (method ", method,
                "); torch.save writes stored entries: re-save the checkpoint with torch.save");
  // The data follows the local header, whose name and extra lengths may differ from the
  // directory's (torch pads the local extra field to align the data to 64 bytes).
  if (local > n || n - local < kLocalSize || le(p + local, 4) != kLocalSig)
    format_fail(path_, local, "entry '", name, "': bad local header");
  const uint64_t lname = le(p + local + 26, 2), lextra = le(p + local + 28, 2);
  e.offset = local + kLocalSize + lname + lextra;
  if (e.offset > n || usize > n - e.offset)
    format_fail(path_, local, "entry '", name, "': ", usize,
                " bytes of data run past the end of the file (", n, " bytes)");
  if (lname != name_len ||
      std::string(reinterpret_cast<const char*>(p + local + kLocalSize), lname) != name)
    format_fail(path_, local, "entry '", name, "': local header names another entry");
  e.size = usize;
  if (!entries_.emplace(name, e).second) format_fail(path_, c, "entry '", name, "' appears twice");
  order_.push_back(name);
  *at = c + kCentralSize + name_len + extra_len + comment_len;
}

const StoredZip::Entry* StoredZip::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

const uint8_t* StoredZip::checked_data(const std::string& name, const Entry& e) const {
  const uint8_t* d = bytes_->data + e.offset;
  if (crc32(d, e.size) != e.crc)
    format_fail(path_, e.offset, "entry '", name, "': CRC-32 mismatch (the file is corrupt)");
  return d;
}

}  // namespace meshnn::io
