// dnnl_glue::strided_matmul against a float64 reference. (That a plan made under two threads is
// not reused under one is checked where it showed:
// Gr00tApi.OneThreadCallIsTheSameAfterATwoThreadOne.)
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "dnnl/matmul.h"
#include "meshnn/core/tensor.h"
#include "support/golden.h"

namespace meshnn::dnnl_glue {
namespace {

struct Case {
  StridedMatmul d;
  Tensor src, wei;
};

// (batch, M, K) × (batch, K, N) → (batch, M, N), dense row-major. K long so a K split shows.
Case make_case() {
  Case c;
  c.d.batch = 3;
  c.d.M = 37;
  c.d.K = 1531;
  c.d.N = 29;
  const int64_t M = c.d.M, K = c.d.K, N = c.d.N;
  c.d.src_strides[0] = M * K, c.d.src_strides[1] = K, c.d.src_strides[2] = 1;
  c.d.wei_strides[0] = K * N, c.d.wei_strides[1] = N, c.d.wei_strides[2] = 1;
  c.d.dst_strides[0] = M * N, c.d.dst_strides[1] = N, c.d.dst_strides[2] = 1;
  c.src = test::random_uniform({c.d.batch, M, K}, 101);
  c.wei = test::random_uniform({c.d.batch, K, N}, 102);
  return c;
}

Tensor run_with(const Case& c, int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  Tensor y({c.d.batch, c.d.M, c.d.N});
  strided_matmul(c.d, c.src.data<float>(), c.wei.data<float>(), y.data<float>());
  omp_set_num_threads(saved);
  return y;
}

TEST(StridedMatmul, MatchesFloat64Reference) {
  const Case c = make_case();
  const Tensor y = run_with(c, 2);
  Tensor ref({c.d.batch, c.d.M, c.d.N});
  const float *a = c.src.data<float>(), *b = c.wei.data<float>();
  for (int64_t n = 0; n < c.d.batch; ++n)
    for (int64_t i = 0; i < c.d.M; ++i)
      for (int64_t j = 0; j < c.d.N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < c.d.K; ++k)
          acc += double(a[(n * c.d.M + i) * c.d.K + k]) * double(b[(n * c.d.K + k) * c.d.N + j]);
        ref.data<float>()[(n * c.d.M + i) * c.d.N + j] = static_cast<float>(acc);
      }
  EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-6));
}

}  // namespace
}  // namespace meshnn::dnnl_glue
