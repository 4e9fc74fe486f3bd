#include "meshnn/ops/filter_design.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "meshnn/core/error.h"

namespace meshnn::ops {
namespace {

// Modified Bessel function of the first kind, order 0, by its power series Σ ((x/2)^k / k!)².
// Every term is positive, so the sum is well conditioned; β ≤ ~20 in practice converges in < 40
// terms.
double bessel_i0(double x) {
  const double q = 0.25 * x * x;
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 500; ++k) {
    term *= q / (static_cast<double>(k) * k);
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  const double px = std::numbers::pi * x;
  return std::sin(px) / px;
}

std::vector<float> to_f32(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

int hann_width(double rolloff, int lpw) {
  return static_cast<int>(std::ceil(static_cast<double>(lpw) / rolloff));
}

}  // namespace

double kaiser_beta(double half_width, int kernel_size) {
  const int half = kernel_size / 2;
  const double delta_f = 4.0 * half_width;
  const double a = 2.285 * (half - 1) * std::numbers::pi * delta_f + 7.95;
  if (a > 50.0) return 0.1102 * (a - 8.7);
  if (a >= 21.0) return 0.5842 * std::pow(a - 21.0, 0.4) + 0.07886 * (a - 21.0);
  return 0.0;
}

std::vector<double> kaiser_sinc_filter1d_f64(double cutoff, double half_width, int kernel_size) {
  // BigVGAN raises for cutoff == 0 (an UnboundLocalError) and its LowPassFilter1d rejects cutoff
  // outside [0, 0.5]; we reject both up front instead of returning an all-zero filter.
  MESHNN_CHECK(kernel_size >= 1, "kaiser_sinc_filter1d: kernel_size must be ≥ 1, got ",
               kernel_size);
  MESHNN_CHECK(cutoff > 0.0 && cutoff <= 0.5,
               "kaiser_sinc_filter1d: cutoff must be in (0, 0.5], got ", cutoff);
  MESHNN_CHECK(half_width > 0.0, "kaiser_sinc_filter1d: half_width must be > 0, got ", half_width);
  const bool even = kernel_size % 2 == 0;
  const int half = kernel_size / 2;
  const double beta = kaiser_beta(half_width, kernel_size);
  const double i0_beta = bessel_i0(beta);
  std::vector<double> f(kernel_size);
  double sum = 0.0;
  for (int n = 0; n < kernel_size; ++n) {
    // Symmetric (periodic = False) window; K = 1 degenerates to a single 1.
    double w = 1.0;
    if (kernel_size > 1) {
      const double r = 2.0 * n / (kernel_size - 1) - 1.0;
      w = bessel_i0(beta * std::sqrt(std::max(0.0, 1.0 - r * r))) / i0_beta;
    }
    const double t = even ? (n - half + 0.5) : static_cast<double>(n - half);
    f[n] = 2.0 * cutoff * w * sinc(2.0 * cutoff * t);
    sum += f[n];
  }
  MESHNN_CHECK(sum != 0.0, "kaiser_sinc_filter1d: taps sum to zero (cutoff ", cutoff, ", K ",
               kernel_size, ")");
  for (double& v : f) v /= sum;
  return f;
}

std::vector<float> kaiser_sinc_filter1d(double cutoff, double half_width, int kernel_size) {
  return to_f32(kaiser_sinc_filter1d_f64(cutoff, half_width, kernel_size));
}

std::vector<double> hann_sinc_filter1d_f64(int ratio, double rolloff, int lowpass_filter_width) {
  MESHNN_CHECK(ratio >= 1, "hann_sinc_filter1d: ratio must be ≥ 1, got ", ratio);
  MESHNN_CHECK(rolloff > 0.0 && rolloff <= 1.0,
               "hann_sinc_filter1d: rolloff must be in (0, 1], got ", rolloff);
  MESHNN_CHECK(lowpass_filter_width >= 1, "hann_sinc_filter1d: lowpass_filter_width must be ≥ 1");
  const int width = hann_width(rolloff, lowpass_filter_width);
  const int k = 2 * width * ratio + 1;
  const double lpw = lowpass_filter_width;
  std::vector<double> h(k);
  for (int n = 0; n < k; ++n) {
    const double t = (static_cast<double>(n) / ratio - width) * rolloff;
    const double tc = std::clamp(t, -lpw, lpw);
    const double c = std::cos(tc * std::numbers::pi / (2.0 * lpw));
    h[n] = sinc(t) * c * c * rolloff / ratio;
  }
  return h;
}

std::vector<float> hann_sinc_filter1d(int ratio, double rolloff, int lowpass_filter_width) {
  return to_f32(hann_sinc_filter1d_f64(ratio, rolloff, lowpass_filter_width));
}

UpsampleGeometry hann_upsample_geometry(int ratio, double rolloff, int lowpass_filter_width) {
  MESHNN_CHECK(ratio >= 1, "hann_upsample_geometry: ratio must be ≥ 1, got ", ratio);
  const int width = hann_width(rolloff, lowpass_filter_width);
  UpsampleGeometry g;
  g.ratio = ratio;
  g.kernel_size = 2 * width * ratio + 1;
  g.pad = width;
  g.pad_left = 2 * width * ratio;
  g.pad_right = g.kernel_size - ratio;
  return g;
}

}  // namespace meshnn::ops
