// Shared pieces of the audio subcommands: timing, progress reporting, input conversion.
#pragma once

#include <chrono>
#include <string>

#include "meshnn/audio_model.h"

namespace meshnn::cli {

double seconds_since(std::chrono::steady_clock::time_point t0);

// Stage progress on stderr: a bar that redraws in place on a terminal, plain lines otherwise,
// nothing when quiet. fn() gives the callback the public API takes.
class Progress {
 public:
  explicit Progress(bool quiet);
  void stage(int done, int total, const std::string& name);
  ProgressFn fn() {
    return [this](int d, int n, const std::string& s) { stage(d, n, s); };
  }

 private:
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point t0_;
};

// --precision's help: a mode, a preset, or stage=mode pairs (meshnn/core/precision.h).
extern const char* const kPrecisionHelp;

// A model's (1, C, S) waveform → the (C, S) samples io::write_wav and the audio sinks take (a view;
// batch 1: a ShapeError names the batch otherwise).
Tensor wav_samples(const Tensor& planar);

}  // namespace meshnn::cli
