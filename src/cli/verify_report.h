// `meshnn verify A B --report report.html`: one self-contained HTML file (inline CSS, the images
// as data: URIs, nothing fetched) with verify's metrics and the spectrograms of A, of B and of
// their difference, so a person sees where two decodes differ in time and frequency.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/spectrogram_image.h"

namespace meshnn::cli {

struct VerifyReport {
  std::string a_path, b_path;
  int sample_rate = 0;  // 0: arrays (no rate: the axes are in samples)
  int64_t frames = 0, channels = 1;
  int n_fft = 1024;
  std::vector<std::pair<std::string, std::string>> metrics;  // name, value as printed
  std::vector<double> level_db;                              // per segment (NaN: silent in A)
  std::vector<std::string> problems, warnings;
  bool pass = true;
};

// The three spectrogram images of signals a and b, (channels, frames) each.
struct SpectrogramImages {
  RgbImage a, b, diff;
  int64_t hop = 0;
  double top_db = 0;
};
// n_fft from verify's --n-fft; the hop keeps the images about 800 columns wide.
SpectrogramImages spectrogram_images(const float* a, const float* b, int64_t frames,
                                     int64_t channels, int n_fft);

// Writes the HTML page to `path` (write_file; the caller has checked the path).
void write_verify_report(const std::string& path, const VerifyReport& r,
                         const SpectrogramImages& img);

}  // namespace meshnn::cli
