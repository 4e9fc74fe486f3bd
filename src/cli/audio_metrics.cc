#include "cli/audio_metrics.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "meshnn/ops/fft.h"

namespace meshnn::cli {

double waveform_psnr_db(const float* a, const float* b, int64_t n) {
  double mse = 0, peak = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = double(b[i]) - a[i];
    mse += d * d;
    if (std::isfinite(a[i])) peak = std::max(peak, std::abs(double(a[i])));
  }
  mse /= static_cast<double>(n);
  return !std::isfinite(mse) ? -INFINITY
         : mse == 0          ? INFINITY
                             : 10.0 * std::log10(peak * peak / mse);
}

double log_spectral_distance_db(const float* a, const float* b, int64_t frames, int64_t stride,
                                int n_fft) {
  const int64_t hop = n_fft / 4, T = frames;
  std::vector<double> win(static_cast<size_t>(n_fft));
  for (int i = 0; i < n_fft; ++i) win[i] = 0.5 - 0.5 * std::cos(2.0 * M_PI * i / n_fft);
  double peak = 0;
  for (int64_t t = 0; t < T; ++t) peak = std::max(peak, std::abs(double(a[t * stride])));
  const double eps = std::max(1e-20, 1e-10 * peak * peak * n_fft * n_fft);
  std::vector<std::complex<double>> fa(static_cast<size_t>(n_fft)), fb(fa.size());
  double sum = 0;
  int64_t used = 0;
  const int64_t n_frames = T <= n_fft ? 1 : (T - n_fft) / hop + 1;
  for (int64_t f = 0; f < n_frames; ++f) {
    double energy = 0;
    for (int i = 0; i < n_fft; ++i) {
      const int64_t t = f * hop + i;
      const double va = t < T ? a[t * stride] : 0.0, vb = t < T ? b[t * stride] : 0.0;
      fa[i] = va * win[i];
      fb[i] = vb * win[i];
      energy += va * va;
    }
    if (energy <= 1e-8 * peak * peak * n_fft) continue;  // silent reference frame
    ops::fft_pow2(fa);
    ops::fft_pow2(fb);
    double acc = 0;
    for (int k = 0; k <= n_fft / 2; ++k) {
      const double d =
          10.0 * std::log10(std::norm(fa[k]) + eps) - 10.0 * std::log10(std::norm(fb[k]) + eps);
      acc += d * d;
    }
    sum += std::sqrt(acc / (n_fft / 2 + 1));
    ++used;
  }
  return used ? sum / static_cast<double>(used) : 0.0;
}

std::vector<double> segment_level_db(const float* a, const float* b, int64_t frames, int64_t stride,
                                     int64_t segments, double floor_rms) {
  const int64_t n = std::clamp<int64_t>(segments, 1, std::max<int64_t>(frames, 1));
  std::vector<double> out(static_cast<size_t>(n), NAN);
  const int64_t base = frames / n, extra = frames % n;
  int64_t t = 0;
  for (int64_t s = 0; s < n; ++s) {
    const int64_t len = base + (s < extra ? 1 : 0);
    double ea = 0, eb = 0;
    for (int64_t i = 0; i < len; ++i, ++t) {
      const double va = a[t * stride], vb = b[t * stride];
      ea += va * va;
      eb += vb * vb;
    }
    if (len == 0 || !(ea > 0) || !(std::sqrt(ea / len) >= floor_rms)) continue;  // silent ref
    out[s] = eb == 0 ? -INFINITY : 10.0 * std::log10(eb / ea);
  }
  return out;
}

}  // namespace meshnn::cli
