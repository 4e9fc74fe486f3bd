#include "cli/audio_common.h"

#include <unistd.h>

#include <cstdio>

namespace meshnn::cli {

const char* const kPrecisionHelp =
    "fp32 | bf16 | bf16x2 | bf16x3 for every stage, the preset bf16-safe (stages vae and vocoder "
    "bf16, bwe fp32), auto (bf16-safe's stages where the CPU has avx512_bf16, else fp32), or per "
    "stage: vae=MODE,vocoder=MODE,bwe=MODE (the stages a model has: docs/precision.md); unnamed "
    "stages run fp32";

std::vector<AudioModelEntry> registered_models(
    const std::function<bool(const AudioModelEntry&)>& keep) {
  std::vector<AudioModelEntry> out;
  for (AudioModelEntry& e : AudioModel::catalog())
    if (keep(e)) out.push_back(std::move(e));
  return out;
}

std::string model_names(const std::vector<AudioModelEntry>& models) {
  std::string s;
  for (const AudioModelEntry& e : models) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

std::string checkpoint_help(const std::vector<AudioModelEntry>& models) {
  std::string s;
  for (const AudioModelEntry& e : models)
    s += (s.empty() ? "" : "; ") + e.name + (e.path.empty() ? "" : ": " + e.path);
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Progress::Progress(bool quiet)
    : quiet_(quiet), tty_(isatty(2)), t0_(std::chrono::steady_clock::now()) {}

void Progress::stage(int done, int total, const std::string& name) {
  if (quiet_) return;
  const double t = seconds_since(t0_);
  if (tty_) {
    const int width = 30, fill = width * done / total;
    std::fprintf(stderr, "\r[%.*s%*s] %d/%d %-22s %6.1f s", fill, "##############################",
                 width - fill, "", done, total, name.c_str(), t);
    if (done == total) std::fputc('\n', stderr);
  } else {
    std::fprintf(stderr, "meshnn: stage %d/%d done: %s (%.1f s)\n", done, total, name.c_str(), t);
  }
  std::fflush(stderr);
}

// (1, C, S) → (C, S)
Tensor wav_samples(const Tensor& planar) {
  MESHNN_CHECK_AS(ShapeError, planar.rank() == 3 && planar.dim(0) == 1, "batch of ", planar.dim(0),
                  ": write one WAV per item (batch 1 expected)");
  planar.check_dtype(DType::f32);
  return planar.reshape({planar.dim(1), planar.dim(2)});
}

}  // namespace meshnn::cli
