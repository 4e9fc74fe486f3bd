// BigVGAN's mel front end (meldataset.py `mel_spectrogram`), for `meshnn vocode --wav`.
#pragma once

#include <vector>

#include "meshnn/core/tensor.h"

namespace meshnn::ops {

struct MelConfig {
  int sampling_rate = 24000;
  int n_fft = 1024;
  int num_mels = 100;
  int hop_size = 256;
  int win_size = 1024;
  double fmin = 0;
  double fmax = 0;  // 0 or negative = sr / 2 (BigVGAN's fmax = None)
};

// librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax) with librosa's defaults: Slaney mel scale,
// Slaney area normalisation. Computed in double, returned as f32 like BigVGAN's torch copy.
// → (num_mels, n_fft/2 + 1) f32.
Tensor slaney_mel_filterbank(const MelConfig& cfg);

// wav: (T,) f32 in [−1, 1], T > (n_fft − hop)/2 → log-mel (num_mels, ⌊T/hop⌋) f32.
// Reflect pad (n_fft − hop)/2 each side, periodic Hann window of win_size (centred in n_fft),
// |STFT| = sqrt(re² + im² + 1e-9), mel projection, ln(max(mel, 1e-5)).
// The DFT runs in double (radix-2 FFT when n_fft is a power of two, direct otherwise), so the
// result is at least as accurate as torch's f32 stft.
Tensor bigvgan_mel_spectrogram(const Tensor& wav, const MelConfig& cfg);

}  // namespace meshnn::ops
