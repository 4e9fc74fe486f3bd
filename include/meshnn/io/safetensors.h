// safetensors reader (mmap, zero-copy, every offset bounds-checked) and writer.
//
// File layout: u64 little-endian header length N | N bytes of JSON header (padded with spaces) |
// data. The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}
// (offsets relative to the start of the data), plus an optional "__metadata__" string map.
// Files are untrusted: a malformed file throws FormatError naming the file and the byte offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::io {

class SafetensorsFile {
 public:
  // Maps the file privately (copy-on-write): writing into a returned view never changes the file.
  static SafetensorsFile open(const std::string& path);
  // Parses an in-memory file; `name` stands in for the path in error messages.
  static SafetensorsFile from_bytes(std::vector<uint8_t> bytes, std::string name);

  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;  // sorted
  // Zero-copy view that keeps the mapping alive when the data is aligned to the dtype size,
  // otherwise an owned copy. WeightError naming the key and the file if the key is missing.
  Tensor get(const std::string& key) const;
  DType dtype(const std::string& key) const;
  const Shape& shape(const std::string& key) const;
  const std::map<std::string, std::string>& metadata() const;  // "__metadata__"
  const std::string& path() const;

  struct Impl;

 private:
  explicit SafetensorsFile(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;  // shared: copies are cheap and share the mapping
};

// Writes tensors in sorted key order, back to back, after a space-padded header whose length is
// a multiple of 8 (byte-identical to tools/goldens/st.py for ASCII names). Written to a temporary
// file and renamed, so a failure never leaves a partial file.
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace meshnn::io
