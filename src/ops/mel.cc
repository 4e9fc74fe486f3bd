#include "ops/mel.h"

#include <cmath>
#include <complex>
#include <numbers>

#include "meshnn/ops/fft.h"

namespace meshnn::ops {
namespace {

constexpr double kPi = std::numbers::pi;

// Slaney mel scale (librosa htk=False): linear below 1 kHz, logarithmic above.
double hz_to_mel(double f) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return f >= min_log_hz ? min_log_mel + std::log(f / min_log_hz) / logstep : f / f_sp;
}
double mel_to_hz(double m) {
  const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return m >= min_log_mel ? min_log_hz * std::exp(logstep * (m - min_log_mel)) : f_sp * m;
}

}  // namespace

void fft_pow2(std::vector<std::complex<double>>& a) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const double ang = -2 * kPi / static_cast<double>(len);
    for (size_t i = 0; i < n; i += len)
      for (size_t k = 0; k < len / 2; ++k) {
        // Twiddles from cos/sin directly (not by repeated multiplication) to keep full precision.
        const std::complex<double> w(std::cos(ang * k), std::sin(ang * k));
        const std::complex<double> u = a[i + k], v = a[i + k + len / 2] * w;
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
  }
}

Tensor slaney_mel_filterbank(const MelConfig& cfg) {
  MESHNN_CHECK(cfg.sampling_rate > 0 && cfg.n_fft > 0 && cfg.num_mels > 0,
               "mel config: sampling_rate, n_fft and num_mels must be positive");
  const double fmax = cfg.fmax > 0 ? cfg.fmax : cfg.sampling_rate / 2.0;
  MESHNN_CHECK(cfg.fmin >= 0 && cfg.fmin < fmax, "mel config: need 0 ≤ fmin < fmax, got fmin ",
               cfg.fmin, ", fmax ", fmax);
  const int n_bins = cfg.n_fft / 2 + 1;
  const int n_mels = cfg.num_mels;
  std::vector<double> hz(n_mels + 2);
  const double m_lo = hz_to_mel(cfg.fmin), m_hi = hz_to_mel(fmax);
  for (int i = 0; i < n_mels + 2; ++i)
    hz[i] = mel_to_hz(m_lo + (m_hi - m_lo) * i / static_cast<double>(n_mels + 1));
  Tensor fb({n_mels, n_bins});
  float* w = fb.data<float>();
  for (int i = 0; i < n_mels; ++i) {
    const double enorm = 2.0 / (hz[i + 2] - hz[i]);
    for (int k = 0; k < n_bins; ++k) {
      const double f = k * static_cast<double>(cfg.sampling_rate) / cfg.n_fft;
      const double lower = (f - hz[i]) / (hz[i + 1] - hz[i]);
      const double upper = (hz[i + 2] - f) / (hz[i + 2] - hz[i + 1]);
      w[i * n_bins + k] = static_cast<float>(std::max(0.0, std::min(lower, upper)) * enorm);
    }
  }
  return fb;
}

Tensor bigvgan_mel_spectrogram(const Tensor& wav, const MelConfig& cfg) {
  wav.check_dtype(DType::f32);
  MESHNN_CHECK_AS(ShapeError, wav.rank() == 1, "mel: expected a mono waveform (T,), got ",
                  shape_str(wav.shape()));
  MESHNN_CHECK(cfg.win_size <= cfg.n_fft && cfg.hop_size > 0, "mel config: need win_size ≤ n_fft",
               " and hop_size > 0");
  const int64_t t = wav.dim(0);
  const int64_t pad = (cfg.n_fft - cfg.hop_size) / 2;
  MESHNN_CHECK_AS(ShapeError, t > pad, "mel: waveform of ", t,
                  " samples is too short for reflect padding of ", pad);
  const float* x = wav.data<float>();
  auto sample = [&](int64_t i) -> double {  // reflect padding (no edge repeat), like F.pad reflect
    if (i < 0) i = -i;
    if (i >= t) i = 2 * (t - 1) - i;
    return x[i];
  };
  const int64_t n_frames = (t + 2 * pad - cfg.n_fft) / cfg.hop_size + 1;
  const int n_bins = cfg.n_fft / 2 + 1;
  // torch.stft centres a shorter window inside n_fft.
  std::vector<double> window(cfg.n_fft, 0.0);
  const int off = (cfg.n_fft - cfg.win_size) / 2;
  for (int n = 0; n < cfg.win_size; ++n)
    window[off + n] = 0.5 - 0.5 * std::cos(2 * kPi * n / cfg.win_size);
  const Tensor fb = slaney_mel_filterbank(cfg);
  const float* w = fb.data<float>();
  const bool pow2 = (cfg.n_fft & (cfg.n_fft - 1)) == 0;
  Tensor out({cfg.num_mels, n_frames});
  float* o = out.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t f = 0; f < n_frames; ++f) {
    std::vector<std::complex<double>> buf(cfg.n_fft);
    for (int n = 0; n < cfg.n_fft; ++n) buf[n] = sample(f * cfg.hop_size + n - pad) * window[n];
    std::vector<double> mag(n_bins);
    if (pow2) {
      fft_pow2(buf);
      for (int k = 0; k < n_bins; ++k) mag[k] = std::sqrt(std::norm(buf[k]) + 1e-9);
    } else {
      for (int k = 0; k < n_bins; ++k) {
        std::complex<double> acc = 0;
        for (int n = 0; n < cfg.n_fft; ++n)
          acc += buf[n] * std::polar(1.0, -2 * kPi * static_cast<double>(k) * n / cfg.n_fft);
        mag[k] = std::sqrt(std::norm(acc) + 1e-9);
      }
    }
    for (int m = 0; m < cfg.num_mels; ++m) {
      double acc = 0;
      for (int k = 0; k < n_bins; ++k) acc += static_cast<double>(w[m * n_bins + k]) * mag[k];
      o[m * n_frames + f] = static_cast<float>(std::log(std::max(acc, 1e-5)));
    }
  }
  return out;
}

}  // namespace meshnn::ops
