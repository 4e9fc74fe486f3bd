// WAV audio via libsndfile: samples as a (T, C) f32 tensor (interleaved frames, C channels).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::io {

enum class WavFormat { float32, pcm16 };

struct WavAudio {
  Tensor samples;  // (T, C) f32; integer PCM is scaled to [-1, 1)
  int sample_rate = 0;
};

// Reads a WAV (RIFF / WAVE-extensible / RF64) file; FormatError naming the file if it is not one
// or is malformed.
WavAudio read_wav(const std::string& path);
// Parses an in-memory WAV; `name` stands in for the path in error messages.
WavAudio read_wav_bytes(const uint8_t* data, size_t size, const std::string& name);

// samples: (T, C) f32, finite; pcm16 clips to [-1, 1]. Written to a temporary file and renamed,
// so a failure never leaves a partial output file.
void write_wav(const std::string& path, const Tensor& samples, int sample_rate,
               WavFormat format = WavFormat::float32);

// (T, C) interleaved samples → (C, 1, T): each channel one batch item of a mono model input.
Tensor channels_as_batch(const Tensor& samples);

}  // namespace meshnn::io
