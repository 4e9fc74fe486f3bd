// write-toy-folder DIR [SEED]: a toy audio VAE folder (tests/support/toy_model: config.json and
// seeded random weights) for the tests that drive the toy from another language (the Python one,
// tests/python_toy).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "support/toy_model/config.h"
#include "support/toy_model/weights.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: write-toy-folder DIR [SEED]\n");
    return 2;
  }
  try {
    const uint64_t seed = argc == 3 ? std::stoull(argv[2]) : 1;
    meshnn::test::toy::write_random_folder(argv[1], meshnn::test::toy::Config{}, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write-toy-folder: %s\n", e.what());
    return 1;
  }
  return 0;
}
