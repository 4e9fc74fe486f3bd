// WAV audio via libsndfile: samples as a (C, T) f32 tensor, channels first (planar: each channel
// one row), the one wave layout of the project: the models return (B, C, T), the stream sinks
// (stream_io.h) and Python's meshnn.read_wav / write_wav take (C, T) too. The interleaving a WAV
// data chunk stores (frame after frame) is done here, by ops::interleave / deinterleave.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::io {

enum class WavFormat { float32, pcm16 };

struct WavAudio {
  Tensor samples;  // (C, T) f32; integer PCM is scaled to [-1, 1)
  int sample_rate = 0;
};

// Reads a WAV (RIFF / WAVE-extensible / RF64) file; FormatError naming the file if it is not one
// or is malformed.
WavAudio read_wav(const std::string& path);
// Parses an in-memory WAV; `name` stands in for the path in error messages.
WavAudio read_wav_bytes(const uint8_t* data, size_t size, const std::string& name);

// samples: (C, T) f32, finite; pcm16 clips to [-1, 1]. Written to a temporary file and renamed,
// so a failure never leaves a partial output file.
void write_wav(const std::string& path, const Tensor& samples, int sample_rate,
               WavFormat format = WavFormat::float32);

// (C, T) samples → (C, 1, T): each channel one batch item of a mono model input (a view).
Tensor channels_as_batch(const Tensor& samples);

}  // namespace meshnn::io
