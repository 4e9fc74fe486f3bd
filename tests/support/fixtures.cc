#include "support/fixtures.h"

#include "support/golden.h"

namespace meshnn::test {

io::SafetensorsFile open_fixture(const std::string& name) {
  return io::SafetensorsFile::open(fixture_path(name));
}

std::map<std::string, Tensor> load_fixture(const std::string& name) {
  const io::SafetensorsFile f = open_fixture(name);
  std::map<std::string, Tensor> out;
  for (const std::string& k : f.keys()) out.emplace(k, f.get(k));
  return out;
}

}  // namespace meshnn::test
