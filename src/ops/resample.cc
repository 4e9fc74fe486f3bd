#include "meshnn/ops/resample.h"

#include <vector>

#include "kernels/depthwise_fir.h"
#include "meshnn/ops/padding.h"

namespace meshnn::ops {
namespace {

int64_t fir_out_len(const Tensor& x, size_t K, int stride, const char* op) {
  check_btc(x, op);
  MESHNN_CHECK(K >= 1, op, ": taps must not be empty");
  MESHNN_CHECK(stride >= 1, op, ": stride must be ≥ 1, got ", stride);
  const int64_t T_pad = x.dim(1);
  MESHNN_CHECK_AS(ShapeError, static_cast<int64_t>(K) <= T_pad, op, ": kernel of ", K,
                  " taps is longer than the padded input of ", T_pad, " rows ",
                  shape_str(x.shape()));
  return (T_pad - static_cast<int64_t>(K)) / stride + 1;
}

}  // namespace

void depthwise_tap_filter_into(const Tensor& x, std::span<const float> taps, int stride,
                               Tensor& dst, bool prefer_mac) {
  const int64_t T_out = fir_out_len(x, taps.size(), stride, "depthwise_tap_filter");
  const int64_t B = x.dim(0), C = x.dim(2);
  MESHNN_CHECK_AS(ShapeError, dst.defined() && dst.shape() == Shape({B, T_out, C}),
                  "depthwise_tap_filter: dst must be (", B, ", ", T_out, ", ", C, "), got ",
                  dst.defined() ? shape_str(dst.shape()) : std::string("an undefined tensor"));
  kernels::depthwise_fir_f32(x.data<float>(), B, x.dim(1), C, taps.data(),
                             static_cast<int>(taps.size()), stride, dst.data<float>(), T_out,
                             prefer_mac ? kernels::FirImpl::mac : kernels::FirImpl::fast);
}

Tensor depthwise_tap_filter(const Tensor& x, std::span<const float> taps, int stride,
                            bool prefer_mac) {
  const int64_t T_out = fir_out_len(x, taps.size(), stride, "depthwise_tap_filter");
  Tensor y = Tensor::empty({x.dim(0), T_out, x.dim(2)});
  depthwise_tap_filter_into(x, taps, stride, y, prefer_mac);
  return y;
}

Tensor upsample1d(const Tensor& x, std::span<const float> taps, const UpsampleGeometry& g,
                  bool prefer_mac) {
  check_btc(x, "upsample1d");
  MESHNN_CHECK(g.ratio >= 1, "upsample1d: ratio must be ≥ 1, got ", g.ratio);
  MESHNN_CHECK(static_cast<int>(taps.size()) == g.kernel_size, "upsample1d: expected ",
               g.kernel_size, " taps, got ", taps.size());
  MESHNN_CHECK_AS(ShapeError, x.dim(1) >= 1, "upsample1d: empty sequence ", shape_str(x.shape()));
  const int64_t T = x.dim(1), K = g.kernel_size, r = g.ratio;
  // conv_transpose1d(xp, f, stride r)[j] = Σ_i xp[i]·f[j − r·i] = (zero-stuffed xp, zero-padded by
  // K − 1) correlated with the reversed taps. Only the rows that survive the crop are filtered.
  const Tensor xp = replicate_pad_t(x, g.pad, g.pad);
  const Tensor s = zero_pad_t(zero_stuff_t(xp, r), K - 1, K - 1);
  const int64_t full = (xp.dim(1) - 1) * r + K;  // conv_transpose1d output length
  MESHNN_CHECK_AS(ShapeError, full - g.pad_left - g.pad_right == r * T,
                  "upsample1d: geometry (pad ", g.pad, ", crop ", g.pad_left, "/", g.pad_right,
                  ") does not give ratio·T rows");
  const Tensor win = s.narrow(1, g.pad_left, r * T + K - 1);
  std::vector<float> rev(K);
  // The ratio gain is folded into the taps (exact for r a power of two; one rounding otherwise).
  for (int64_t k = 0; k < K; ++k) rev[k] = static_cast<float>(r) * taps[K - 1 - k];
  return depthwise_tap_filter(win, rev, 1, prefer_mac);
}

Tensor lowpass_filter1d(const Tensor& x, std::span<const float> taps, int stride, bool prefer_mac) {
  check_btc(x, "lowpass_filter1d");
  const int64_t K = static_cast<int64_t>(taps.size());
  MESHNN_CHECK(K >= 1, "lowpass_filter1d: taps must not be empty");
  MESHNN_CHECK(stride >= 1, "lowpass_filter1d: stride must be ≥ 1, got ", stride);
  MESHNN_CHECK_AS(ShapeError, x.dim(1) >= 1, "lowpass_filter1d: empty sequence ",
                  shape_str(x.shape()));
  const int64_t pad_left = K / 2 - (K % 2 == 0 ? 1 : 0), pad_right = K / 2;
  return depthwise_tap_filter(replicate_pad_t(x, pad_left, pad_right), taps, stride, prefer_mac);
}

}  // namespace meshnn::ops
