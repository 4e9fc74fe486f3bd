// The audio comparison metrics of `meshnn verify`, shared with `meshnn bench precision` (one
// definition of PSNR and log-spectral distance for the CLI and docs/precision.md's table).
#pragma once

#include <cstdint>

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

}  // namespace meshnn::cli
