// libFuzzer target: load_npy_bytes on arbitrary bytes. Whatever parses must survive a write/read
// round trip bit for bit. A meshnn::Error is expected for bad input; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "meshnn/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const meshnn::Tensor t = meshnn::io::load_npy_bytes(data, size, "fuzz");
    const auto bytes = meshnn::io::npy_bytes(t);
    const meshnn::Tensor u =
        meshnn::io::load_npy_bytes(bytes.data(), bytes.size(), "fuzz-roundtrip");
    if (u.shape() != t.shape() || u.dtype() != t.dtype() ||
        (t.nbytes() && std::memcmp(u.raw(), t.raw(), t.nbytes()) != 0))
      std::abort();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
