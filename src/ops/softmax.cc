#include "ops/softmax.h"

#include <cmath>
#include <limits>

namespace meshnn::ops {

void softmax_row(float* x, int64_t n, const uint8_t* key_valid) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  float mx = kNegInf;
  // NaN-propagating max: std::max(-inf, NaN) is -inf, which would turn an all-NaN row into the
  // zeros of the no-valid-key case; a NaN max makes the whole row NaN instead.
  for (int64_t j = 0; j < n; ++j)
    if ((!key_valid || key_valid[j]) && (std::isnan(x[j]) || x[j] > mx)) mx = x[j];
  if (mx == kNegInf) {
    for (int64_t j = 0; j < n; ++j) x[j] = 0.f;
    return;
  }
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    const float e = (!key_valid || key_valid[j]) ? std::exp(x[j] - mx) : 0.f;
    x[j] = e;
    sum += e;
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

}  // namespace meshnn::ops
