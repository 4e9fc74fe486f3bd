// Spectrogram pictures for `meshnn verify --report / --plot`: a power spectrogram of channels-first
// audio (averaged over its channels), its colour images (level, or the difference of two), and
// the PNG bytes of an RGB image through libpng.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace meshnn::cli {

// Power in dB, frames × bins (bin k of n_fft / 2 + 1 at k · rate / n_fft Hz), row-major by frame.
struct Spectrogram {
  int64_t frames = 0, bins = 0, hop = 0;
  std::vector<float> db;
  float at(int64_t f, int64_t k) const { return db[static_cast<size_t>(f * bins + k)]; }
  float peak() const;  // the loudest bin (−inf when empty)
};

// x: (channels, frames), channels first. Hann frames of n_fft (a power of two,
// zero-padded past the end) every `hop` samples, |X|² averaged over the channels, 10·log10(· +
// 1e-20). Non-finite samples count as 0 (verify reports them apart).
Spectrogram power_spectrogram(const float* x, int64_t frames, int64_t channels, int n_fft,
                              int64_t hop);

// An RGB image, 3 bytes per pixel, row 0 at the top.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

// One column per spectrogram frame, one row per band of bins (at most `max_height`, the low
// frequencies at the bottom): black at top_db − range_db or below, through purple, magenta and
// orange to pale yellow at top_db.
RgbImage level_image(const Spectrogram& s, double top_db, double range_db, int max_height);
// b − a in dB, blue (B quieter) through white (equal) to red (B louder), saturated at ±range_db;
// grey where both are below floor_db (nothing to compare). a and b of the same size.
RgbImage difference_image(const Spectrogram& a, const Spectrogram& b, double range_db,
                          double floor_db, int max_height);

// The image as PNG bytes (8-bit RGB, libpng). BackendError when libpng fails.
std::string png_bytes(const RgbImage& img);
// `bytes` into `path` (created or truncated); InvalidArgument naming `option` and the path when
// it cannot be written. The caller has checked the path (io::check_output_path: never an input).
void write_file(const std::string& path, const std::string& bytes, const std::string& option);
// write_file(path, png_bytes(img), "--plot").
void write_png(const std::string& path, const RgbImage& img);

}  // namespace meshnn::cli
