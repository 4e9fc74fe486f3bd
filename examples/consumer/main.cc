// A downstream program using the installed meshnn package: runs an audio model on its input and
// writes the WAV, whatever the model is (AudioModel finds it from the checkpoint: here an LTX
// audio decoder and its latent).
//   consumer CHECKPOINT LATENT.npy OUT.wav
#include <cstdio>

#include "meshnn/meshnn.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CHECKPOINT LATENT.npy OUT.wav\n", argv[0]);
    return 2;
  }
  try {
    const auto model = meshnn::AudioModel::load(argv[1]);        // weights loaded once
    const meshnn::Tensor input = meshnn::io::load_npy(argv[2]);  // input_spec(): (1, 8, T, 16)
    const meshnn::Tensor wave = model.run(input);                // (1, C, samples), mesh auto
    // write_wav takes (channels, samples), channels first like the model's output.
    const int64_t n = wave.dim(2);
    const int rate = model.output_spec().sample_rate;
    meshnn::io::write_wav(argv[3], wave.reshape({wave.dim(1), n}), rate);
    std::printf("%s: wrote %s: %lld samples at %d Hz\n", model.description().c_str(), argv[3],
                static_cast<long long>(n), rate);
  } catch (const meshnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
