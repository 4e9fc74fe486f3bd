// libFuzzer target: SafetensorsFile::from_bytes on arbitrary bytes, then every tensor is read.
// A meshnn::Error is the expected outcome for bad input; any other exception or crash is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "meshnn/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto f =
        meshnn::io::SafetensorsFile::from_bytes(std::vector<uint8_t>(data, data + size), "fuzz");
    uint64_t sum = 0;
    for (const auto& k : f.keys()) {
      const meshnn::Tensor t = f.get(k);
      // Touch every byte so ASan sees any out-of-bounds view.
      const auto* p = static_cast<const uint8_t*>(t.raw());
      for (size_t i = 0; i < t.nbytes(); ++i) sum += p[i];
      if (t.shape() != f.shape(k) || t.dtype() != f.dtype(k)) std::abort();
    }
    for (const auto& kv : f.metadata()) sum += kv.first.size() + kv.second.size();
    volatile uint64_t sink = sum;
    (void)sink;
  } catch (const meshnn::Error&) {
  }
  return 0;
}
