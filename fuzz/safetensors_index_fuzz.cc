// libFuzzer target: the text of a model.safetensors.index.json → io::parse_safetensors_index. A
// meshnn::Error is the expected outcome for bad input; any other exception or crash is a bug, and
// so is an accepted shard name that could leave the folder.
#include <cstddef>
#include <cstdint>
#include <string>

#include "meshnn/core/error.h"
#include "meshnn/io/sharded_safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [key, file] : meshnn::io::parse_safetensors_index(text, "index.json"))
      if (file.empty() || file.find('/') != std::string::npos || file == "..") __builtin_trap();
  } catch (const meshnn::Error&) {
  }
  return 0;
}
