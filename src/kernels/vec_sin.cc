#include "kernels/vec_sin.h"

#include "meshnn/core/cpu.h"

namespace meshnn::kernels {
namespace {

__attribute__((target("avx2,fma"))) void sin_f32_avx2(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, sin_avx2(_mm256_loadu_ps(x + i)));
  if (i < n) {
    float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    _mm256_storeu_ps(buf, sin_avx2(_mm256_loadu_ps(buf)));
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

}  // namespace

void sin_f32(const float* x, float* y, int64_t n, bool force_scalar) {
  const CpuFeatures& f = cpu_features();
  if (!force_scalar && f.avx2 && f.fma) {
    sin_f32_avx2(x, y, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]);
}

}  // namespace meshnn::kernels
