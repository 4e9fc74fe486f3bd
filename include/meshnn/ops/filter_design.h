// Filter design for the audio resamplers: BigVGAN's kaiser-windowed sinc and the Hann-windowed sinc
// of the LTX-2 bandwidth-extension ×3 resampler, plus the pad / crop geometry of the
// transposed-conv upsampler (BigVGAN `UpSample1d`) each filter is used with.
#pragma once

#include <vector>

namespace meshnn::ops {

// BigVGAN `kaiser_sinc_filter1d(cutoff, half_width, kernel_size)` (alias_free_activation/torch/
// filter.py): symmetric Kaiser window with the Kaiser β rule, sinc at cutoff, normalised to Σ = 1.
// Computed in double; the f32 version is the double taps rounded once.
// cutoff ∈ (0, 0.5], half_width > 0, kernel_size ≥ 1 → kernel_size taps.
std::vector<double> kaiser_sinc_filter1d_f64(double cutoff, double half_width, int kernel_size);
std::vector<float> kaiser_sinc_filter1d(double cutoff, double half_width, int kernel_size);

// The Kaiser β BigVGAN derives from the kernel size and transition width (exposed for tests).
double kaiser_beta(double half_width, int kernel_size);

// LTX-2 `UpSample1d(ratio, window_type="hann")` taps (not normalised, not in the checkpoint):
// width = ceil(lowpass_filter_width / rolloff), K = 2·width·ratio + 1,
// t_n = (n/ratio − width)·rolloff, h_n = sinc(t_n) · cos²(clamp(t_n, ±lpw)·π/(2·lpw)) ·
// rolloff/ratio.
std::vector<double> hann_sinc_filter1d_f64(int ratio, double rolloff = 0.99,
                                           int lowpass_filter_width = 6);
std::vector<float> hann_sinc_filter1d(int ratio, double rolloff = 0.99,
                                      int lowpass_filter_width = 6);

// Geometry of a BigVGAN-style transposed-conv upsampler: replicate-pad `pad` input rows on each
// side, y = ratio · conv_transpose1d(x_pad, taps, stride = ratio), crop [pad_left, len −
// pad_right). Output length is always ratio · T.
struct UpsampleGeometry {
  int ratio = 2;
  int kernel_size = 12;
  int pad = 5;
  int pad_left = 15;
  int pad_right = 15;
};
// LTX-2 hann UpSample1d: pad = width, pad_left = 2·width·r, pad_right = K − r.
UpsampleGeometry hann_upsample_geometry(int ratio, double rolloff = 0.99,
                                        int lowpass_filter_width = 6);

}  // namespace meshnn::ops
