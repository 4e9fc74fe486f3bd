// The audio comparison metrics of `meshnn verify`, shared with `meshnn-bench precision` (one
// definition of PSNR and log-spectral distance for the CLI and docs/precision.md's table).
#pragma once

#include <cstdint>
#include <vector>

namespace meshnn::cli {

// Waveform PSNR of b against reference a over n values, dB: 10·log10(peak(a)² / mean((b − a)²)).
// +inf when equal, −inf when a difference is not finite.
double waveform_psnr_db(const float* a, const float* b, int64_t n);

// Log-spectral distance in dB between one channel of a (reference) and b: `frames` samples,
// sample t at x[t · stride] (interleaved channels: stride = channels; planar: stride 1).
// Hann-windowed frames of n_fft (a power of two) with hop n_fft / 4; per frame
// sqrt(mean over bins of (10·log10 (|A|² + ε) − 10·log10 (|B|² + ε))²), averaged over the frames
// where the reference is not silent (ε = 1e-10 of the peak power keeps silent bins from
// dominating). Signals shorter than a frame use one zero-padded frame.
double log_spectral_distance_db(const float* a, const float* b, int64_t frames, int64_t stride,
                                int n_fft);

// Level of b against reference a per segment, dB: one channel of `frames` samples (sample t at
// x[t · stride]) cut into `segments` equal parts (the first frames % segments parts one sample
// longer); per part 10·log10(mean(b²) / mean(a²)). NaN where the reference part's RMS is below
// `floor_rms` (nothing to keep the level of), −inf where b's part is all zeros. A decoder that
// loses its level only at some lengths or in one region shows here, where one RMS over the whole
// signal (or an absolute floor) would pass. segments is clamped to [1, frames].
std::vector<double> segment_level_db(const float* a, const float* b, int64_t frames, int64_t stride,
                                     int64_t segments, double floor_rms);

}  // namespace meshnn::cli
