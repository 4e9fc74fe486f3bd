// Loading committed safetensors fixtures (tests/fixtures/<name>) in tests.
#pragma once

#include <map>
#include <string>

#include "meshnn/core/tensor.h"
#include "meshnn/io/safetensors.h"

namespace meshnn::test {

// Every tensor of tests/fixtures/<name> (views into the mapping).
std::map<std::string, Tensor> load_fixture(const std::string& name);
// The file itself, for metadata() or lazy get().
io::SafetensorsFile open_fixture(const std::string& name);

}  // namespace meshnn::test
