// libFuzzer target: read_wav_bytes (libsndfile virtual I/O) on arbitrary bytes.
// A meshnn::Error is expected for bad input; any other exception or crash is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "meshnn/io/wav.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const meshnn::io::WavAudio a = meshnn::io::read_wav_bytes(data, size, "fuzz");
    if (a.samples.rank() != 2 || a.samples.dim(0) < 1 || a.sample_rate < 1) std::abort();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
