// A downstream program using the installed meshnn package: decodes an LTX audio latent to a WAV.
//   consumer CHECKPOINT.safetensors LATENT.npy OUT.wav
#include <cstdio>

#include "meshnn/meshnn.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CHECKPOINT.safetensors LATENT.npy OUT.wav\n", argv[0]);
    return 2;
  }
  try {
    const auto decoder = meshnn::LtxAudioDecoder::load(argv[1]);  // weights loaded once
    const meshnn::Tensor latent = meshnn::io::load_npy(argv[2]);  // (1, 8, T, 16) f32
    const meshnn::Tensor wave = decoder.decode(latent);           // (1, 2, samples), mesh auto
    // write_wav takes (channels, samples), channels first like the decoder's output.
    const int64_t n = wave.dim(2);
    meshnn::io::write_wav(argv[3], wave.reshape({wave.dim(1), n}), decoder.sample_rate());
    std::printf("wrote %s: %lld samples at %d Hz\n", argv[3], static_cast<long long>(n),
                decoder.sample_rate());
  } catch (const meshnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
