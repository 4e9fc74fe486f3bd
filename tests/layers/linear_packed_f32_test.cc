// Linear on the packed-f32 matmul primitive (LinearPrimitive::set_packed_f32, used by the GR00T
// action head) against the float64 reference, in both weight layouts and with strided rows.
#include <gtest/gtest.h>

#include "layers/gr00t_layers_ref.h"
#include "layers/linear.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

using layers::Activation;
using layers::Linear;

TEST(Gr00tLinearPackedF32, MatchesFloat64Reference) {
  for (const auto& [M, K, N, act] :
       {std::tuple<int64_t, int64_t, int64_t, Activation>{49, 96, 160, Activation::gelu_tanh},
        {5, 64, 48, Activation::none},
        {41, 70, 45, Activation::relu}}) {
    SCOPED_TRACE(M);
    const Tensor x = random_normal({M, K + 3}, 1), w = random_uniform({N, K}, 2, -0.3f, 0.3f),
                 b = random_uniform({N}, 3);
    const int a = act == Activation::relu ? 1 : act == Activation::gelu_tanh ? 2 : 0;
    // rows K + 3 apart: the strided-source copy path; then dense rows
    const Tensor xd = x.narrow(1, 0, K);
    const Tensor want =
        ref::to_tensor(ref::linear(ref::f64(xd), ref::f64(w), ref::f64(b), M, K, N, a), {M, N});
    Linear l = Linear::from_out_in(w, b, act);
    l.primitive().set_packed_f32(true);
    Tensor y({M, N});
    l.forward_rows(x.data<float>(), M, K + 3, y.data<float>(), N);
    EXPECT_TRUE(close_rel_l2(y, want, 1e-6, "strided rows"));
    EXPECT_TRUE(close_rel_l2(l.forward(xd), want, 1e-6, "dense rows"));
    EXPECT_NE(l.primitive().impl_info(M, false), "dnnl_sgemm");
    Tensor w_t({K, N});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) w_t.data<float>()[k * N + n] = w.data<float>()[n * K + k];
    Linear li = Linear::from_in_out(w_t, b, act);
    li.primitive().set_packed_f32(true);
    EXPECT_TRUE(close_rel_l2(li.forward(xd), want, 1e-6, "in_out"));
  }
}

}  // namespace
}  // namespace meshnn::test
