// NumPy .npy reader and writer (format versions 1.0, 2.0 and 3.0).
//
// Layout: "\x93NUMPY" | major u8 | minor u8 | header length (u16 LE in 1.0, u32 LE in 2.0/3.0) |
// header: a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and '\n' | raw C-order little-endian data.
// Supported descr: <f4 <f8 <f2 <i8 <i4 |u1 |b1. Fortran order, big-endian data, object or
// structured dtypes and malformed headers throw FormatError naming the file and the byte offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::io {

// Returns an owned, 64-byte aligned tensor.
Tensor load_npy(const std::string& path);
// Parses an in-memory .npy; `name` stands in for the path in error messages.
Tensor load_npy_bytes(const uint8_t* data, size_t size, const std::string& name);

// Writes version 1.0, byte-identical to numpy.save for these dtypes.
// bf16 has no numpy dtype: Unsupported (convert with .to(DType::f32) first). Written to a
// temporary file and renamed.
void save_npy(const std::string& path, const Tensor& t);
// The bytes save_npy would write.
std::vector<uint8_t> npy_bytes(const Tensor& t);

}  // namespace meshnn::io
