// Conv layers vs PyTorch goldens (tools/goldens/gen_conv.py → tests/fixtures/conv.safetensors),
// loaded through the state-dict mapping with the real torch key spellings (weight, weight_g /
// weight_v, CausalConv2d's conv.weight). The configurations mirror the generator's table.
#include <gtest/gtest.h>

#include "meshnn/layers/conv.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn {
namespace {

constexpr double kTol = 1e-5;  // spec: f32 rel L2 per op

class ConvGolden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    state_ = new std::map<std::string, Tensor>(test::load_fixture("conv.safetensors"));
  }
  static void TearDownTestSuite() {
    delete state_;
    state_ = nullptr;
  }
  static const Tensor& get(const std::string& k) {
    auto it = state_->find(k);
    if (it == state_->end()) throw WeightError("fixture key missing: " + k);
    return it->second;
  }
  template <class Layer>
  void check(Layer& layer, const std::string& name, Precision p = Precision::fp32) {
    layer.load(*state_, name + ".mod");
    Tensor y = layer.forward(get(name + ".x"));
    EXPECT_TRUE(test::close_rel_l2(y, get(name + ".y"), kTol, name + " " + precision_name(p)));
  }
  static std::map<std::string, Tensor>* state_;
};
std::map<std::string, Tensor>* ConvGolden::state_ = nullptr;

Conv1dConfig c1(int64_t ci, int64_t co, int64_t k, int64_t stride = 1, int64_t dil = 1) {
  Conv1dConfig c;
  c.in_channels = ci;
  c.out_channels = co;
  c.kernel_size = k;
  c.stride = stride;
  c.dilation = dil;
  return c;
}

TEST_F(ConvGolden, Conv1d) {
  Conv1d a(c1(12, 12, 7, 1, 3), "c1_amp");
  check(a, "c1_amp");
  Conv1d b(c1(16, 24, 7), "c1_pre");
  check(b, "c1_pre");
  Conv1dConfig post = c1(24, 2, 7);
  post.bias = false;
  Conv1d e(post, "c1_post");
  check(e, "c1_post");
  Conv1dConfig dac = c1(8, 16, 4, 2);
  dac.padding = 1;
  Conv1d c(dac, "c1_dac");
  check(c, "c1_dac");
  Conv1dConfig causal = c1(6, 10, 5, 2, 2);
  causal.padding_mode = "causal";
  causal.bias = false;
  Conv1d d(causal, "c1_causal");
  check(d, "c1_causal");
}

TEST_F(ConvGolden, Conv2d) {
  struct Case {
    const char* name;
    int64_t ci, co, kh, kw, sh;
    const char* mode;
  };
  for (const Case& c : {Case{"c2_causal_h", 8, 12, 3, 3, 1, "causal_height"},
                        Case{"c2_short", 12, 6, 1, 1, 1, "causal_height"},
                        Case{"c2_causal_w", 4, 5, 3, 3, 1, "causal_width"},
                        Case{"c2_zeros_s2", 5, 7, 3, 3, 2, "zeros"}}) {
    Conv2dConfig cfg;
    cfg.in_channels = c.ci;
    cfg.out_channels = c.co;
    cfg.kernel_size = {c.kh, c.kw};
    cfg.stride = {c.sh, 1};
    cfg.padding_mode = c.mode;
    Conv2d conv(cfg, c.name);
    check(conv, c.name);
  }
}

TEST_F(ConvGolden, ConvTranspose1d) {
  auto ct = [](int64_t ci, int64_t co, int64_t k, int64_t s) {
    ConvTranspose1dConfig c;
    c.in_channels = ci;
    c.out_channels = co;
    c.kernel_size = k;
    c.stride = s;
    return c;
  };
  ConvTranspose1d a(ct(16, 8, 11, 5), "ct_ltx0");
  check(a, "ct_ltx0");
  ConvTranspose1d b(ct(8, 4, 4, 2), "ct_k4s2");
  check(b, "ct_k4s2");
  ConvTranspose1d c(ct(12, 6, 12, 6), "ct_bwe0");
  check(c, "ct_bwe0");
  ConvTranspose1dConfig op = ct(5, 7, 3, 2);
  op.padding = 1;
  op.output_padding = 1;
  op.dilation = 2;
  op.bias = false;
  ConvTranspose1d d(op, "ct_op");
  check(d, "ct_op");
}

// The bf16 modes against the same goldens, with the bounds of docs/precision.md (small shapes, so
// these are loose sanity bounds; the ordering test lives in conv_precision_test.cc).
TEST_F(ConvGolden, PrecisionModesStayWithinBounds) {
  const std::pair<Precision, double> modes[] = {
      {Precision::bf16, 1e-2}, {Precision::bf16x2, 1e-2}, {Precision::bf16x3, 1e-4}};
  for (auto [p, tol] : modes) {
    Conv1dConfig amp = c1(12, 12, 7, 1, 3);
    amp.precision = p;
    Conv1d a(amp, "c1_amp");
    a.load(*state_, "c1_amp.mod");
    EXPECT_TRUE(test::close_rel_l2(a.forward(get("c1_amp.x")), get("c1_amp.y"), tol,
                                   std::string("c1_amp ") + precision_name(p)));
    ConvTranspose1dConfig ct;
    ct.in_channels = 16;
    ct.out_channels = 8;
    ct.kernel_size = 11;
    ct.stride = 5;
    ct.precision = p;
    ConvTranspose1d u(ct, "ct_ltx0");
    u.load(*state_, "ct_ltx0.mod");
    EXPECT_TRUE(test::close_rel_l2(u.forward(get("ct_ltx0.x")), get("ct_ltx0.y"), tol,
                                   std::string("ct_ltx0 ") + precision_name(p)));
  }
}

}  // namespace
}  // namespace meshnn
