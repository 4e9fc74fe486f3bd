// The .npy header parser of npy.cc, for readers that do not hold the whole file in memory (the
// progressive frame reader in stream_frames.cc). Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "meshnn/core/tensor.h"

namespace meshnn::io {

struct NpyHeader {
  DType dtype = DType::f32;
  Shape shape;
  uint64_t data_offset = 0;  // first data byte (end of the header)
  uint64_t data_bytes = 0;   // numel · dtype size, equal to size − data_offset
};

// End of the header (= data offset) of a .npy file of `size` bytes, from its first
// min(size, 12) bytes (`avail` of them at `data`). FormatError naming `name` and the offset for a
// bad magic, version, or a header length past the end of the file.
uint64_t npy_header_end(const uint8_t* data, size_t avail, uint64_t size, const std::string& name);

// The full header check of load_npy_bytes: magic, version, dict, supported descr, C order, and a
// data section of exactly numel · dtype size bytes up to `size`. `data` holds the first `avail`
// bytes of the file, at least up to npy_header_end().
NpyHeader parse_npy_header(const uint8_t* data, size_t avail, uint64_t size,
                           const std::string& name);

}  // namespace meshnn::io
