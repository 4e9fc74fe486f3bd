// A reader of the zip archives torch.save writes: the central directory of a whole file in memory
// (mmap), each entry's bytes as a range of that memory. Only stored (uncompressed) entries.
//
// Why our own reader and not libzip: torch.save (PyTorchStreamWriter, miniz) writes every entry
// stored, its data padded to a 64-byte boundary, so a tensor's bytes can be used in place from
// the mapping, zero-copy, as the safetensors reader does. libzip hands entries out through
// zip_fread into buffers (a second copy of every weight) and brings a dependency with far more
// format than we accept (deflate, bzip2, encryption, writing). A stored-only reader is about 200
// lines, every offset bounds-checked here and fuzzed (fuzz/torch_checkpoint_fuzz.cc).
//
// Files are untrusted: any malformed structure throws FormatError naming the file and the byte
// offset. A compressed or encrypted entry is refused by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/file_util.h"

namespace meshnn::io {

class StoredZip {
 public:
  struct Entry {
    uint64_t offset = 0;  // of the data, from the start of the file
    uint64_t size = 0;
    uint32_t crc = 0;  // CRC-32 the central directory records
  };

  // Parses the end-of-central-directory record (zip64 too) and every central directory entry.
  // `path` names the file in errors.
  StoredZip(std::shared_ptr<ByteSource> bytes, std::string path);

  // Entry names in central-directory order.
  const std::vector<std::string>& names() const { return order_; }
  // nullptr when there is no such entry.
  const Entry* find(const std::string& name) const;
  // The entry's bytes, their CRC-32 checked against the directory (FormatError on a mismatch:
  // a corrupt or truncated file).
  const uint8_t* checked_data(const std::string& name, const Entry& e) const;
  const std::shared_ptr<ByteSource>& bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  void parse();
  uint64_t central_directory(uint64_t* count, uint64_t* size) const;
  void parse_entry(uint64_t* at, uint64_t end);

  std::shared_ptr<ByteSource> bytes_;
  std::string path_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

// CRC-32 (the zip / IEEE 802.3 polynomial, reflected) of n bytes.
uint32_t crc32(const uint8_t* p, uint64_t n);

}  // namespace meshnn::io
