#include "meshnn/ops/resample.h"

#include <gtest/gtest.h>

#include "kernels/audio_ref.h"
#include "kernels/depthwise_fir.h"
#include "meshnn/core/cpu.h"
#include "support/activation_ref.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::ops {
namespace {

using test::close_rel_l2;
namespace ref = test::ref;

std::vector<float> random_taps(int K, uint64_t seed) {
  const Tensor t = test::random_uniform({K}, seed, -0.5f, 0.5f);
  return std::vector<float>(t.data<float>(), t.data<float>() + K);
}

TEST(DepthwiseTapFilter, MatchesFloat64Reference) {
  uint64_t seed = 100;
  for (int64_t C : {1, 24, 100, 512})
    for (int K : {1, 3, 12, 43})
      for (int stride : {1, 2, 3}) {
        const int64_t T_pad = K + 2 * 17 + 1;  // odd
        const Tensor x = test::random_normal({2, T_pad, C}, ++seed);
        const std::vector<float> taps = random_taps(K, ++seed);
        const ref::Seq want = ref::fir(ref::from_tensor(x), ref::to_f64(taps), stride);
        const Tensor fast = depthwise_tap_filter(x, taps, stride);
        const Tensor mac = depthwise_tap_filter(x, taps, stride, /*prefer_mac=*/true);
        const std::string what =
            "C=" + std::to_string(C) + " K=" + std::to_string(K) + " s=" + std::to_string(stride);
        EXPECT_TRUE(close_rel_l2(fast, ref::to_tensor(want), 2e-7, "fast " + what));
        EXPECT_TRUE(close_rel_l2(mac, ref::to_tensor(want), 2e-7, "mac " + what));
        EXPECT_TRUE(close_rel_l2(fast, mac, 2e-7, "fast vs mac " + what));
      }
}

TEST(DepthwiseTapFilter, FastAvx2EqualsItsScalarReferenceBitForBit) {
  if (!(cpu_features().avx2 && cpu_features().fma)) GTEST_SKIP() << "no AVX2+FMA";
  for (int64_t C : {1, 24, 100, 512}) {
    const Tensor x = test::random_normal({1, 41, C}, 7 + C);
    const std::vector<float> taps = random_taps(12, 3);
    Tensor a = Tensor::empty({1, 15, C}), b = Tensor::empty({1, 15, C});
    kernels::depthwise_fir_f32(x.data<float>(), 1, 41, C, taps.data(), 12, 2, a.data<float>(), 15,
                               kernels::FirImpl::fast);
    kernels::depthwise_fir_f32(x.data<float>(), 1, 41, C, taps.data(), 12, 2, b.data<float>(), 15,
                               kernels::FirImpl::fast_scalar);
    EXPECT_TRUE(test::bit_equal(a, b, "C=" + std::to_string(C)));
    std::vector<float> taps0 = taps;
    taps0[3] = 0.f;  // a zero tap is skipped by both MAC forms
    kernels::depthwise_fir_f32(x.data<float>(), 1, 41, C, taps0.data(), 12, 2, a.data<float>(), 15,
                               kernels::FirImpl::mac);
    kernels::depthwise_fir_f32(x.data<float>(), 1, 41, C, taps0.data(), 12, 2, b.data<float>(), 15,
                               kernels::FirImpl::mac_scalar);
    EXPECT_TRUE(test::bit_equal(a, b, "mac C=" + std::to_string(C)));
  }
}

TEST(DepthwiseTapFilter, MacIsTheExactMultiplyAddForm) {
  // prefer_mac: products rounded then added in tap order, zero taps skipped.
  const Tensor x = test::random_normal({1, 20, 24}, 5);
  const std::vector<float> taps = {0.25f, 0.f, -0.7f, 0.125f, 0.33f};
  const Tensor y = depthwise_tap_filter(x, taps, 3, true);
  const float* px = x.data<float>();
  for (int64_t t = 0; t < y.dim(1); ++t)
    for (int64_t c = 0; c < 24; ++c) {
      volatile float acc = taps[0] * px[(3 * t) * 24 + c];
      for (int k = 2; k < 5; ++k) {
        volatile float p = taps[k] * px[(3 * t + k) * 24 + c];
        acc = acc + p;
      }
      EXPECT_EQ(y.data<float>()[t * 24 + c], acc);
    }
}

TEST(DepthwiseTapFilter, BadInput) {
  const std::vector<float> taps(12, 0.1f);
  EXPECT_THROW(depthwise_tap_filter(test::random_uniform({10, 4}, 1), taps, 1), ShapeError);
  EXPECT_THROW(depthwise_tap_filter(test::random_uniform({1, 11, 4}, 1), taps, 1),
               ShapeError);  // K > T_pad
  EXPECT_THROW(depthwise_tap_filter(test::random_uniform({1, 20, 4}, 1), taps, 0), InvalidArgument);
  EXPECT_THROW(depthwise_tap_filter(test::random_uniform({1, 20, 4}, 1), taps, -2),
               InvalidArgument);
  EXPECT_THROW(depthwise_tap_filter(test::random_uniform({1, 20, 4}, 1), std::vector<float>{}, 1),
               InvalidArgument);
  Tensor wrong = Tensor::empty({1, 3, 4});
  EXPECT_THROW(depthwise_tap_filter_into(test::random_uniform({1, 20, 4}, 1), taps, 1, wrong),
               ShapeError);
}

TEST(Resample, UpsampleMatchesFloat64Reference) {
  uint64_t seed = 300;
  for (int64_t C : {1, 24, 100}) {
    for (int64_t T : {1, 3, 7, 12, 37}) {
      const Tensor x = test::random_normal({2, T, C}, ++seed);
      const std::string what = "C=" + std::to_string(C) + " T=" + std::to_string(T);
      {  // kaiser ×2, K = 12 (BigVGAN Activation1d)
        const std::vector<float> f = kaiser_sinc_filter1d(0.25, 0.3, 12);
        const UpsampleGeometry g = test::kaiser_upsample_geometry(2, 12);
        const Tensor y = upsample1d(x, f, g);
        ASSERT_EQ(y.shape(), Shape({2, 2 * T, C}));
        const ref::Seq want =
            ref::upsample(ref::from_tensor(x), ref::to_f64(f), 2, g.pad, g.pad_left, g.pad_right);
        EXPECT_TRUE(close_rel_l2(y, ref::to_tensor(want), 2e-7, "kaiser x2 " + what));
        EXPECT_TRUE(close_rel_l2(upsample1d(x, f, g, true), ref::to_tensor(want), 2e-7,
                                 "kaiser x2 mac " + what));
      }
      {  // hann ×3, K = 43 (LTX-2 BWE skip path)
        const std::vector<float> f = hann_sinc_filter1d(3);
        const UpsampleGeometry g = hann_upsample_geometry(3);
        const Tensor y = upsample1d(x, f, g);
        ASSERT_EQ(y.shape(), Shape({2, 3 * T, C}));
        const ref::Seq want =
            ref::upsample(ref::from_tensor(x), ref::to_f64(f), 3, g.pad, g.pad_left, g.pad_right);
        EXPECT_TRUE(close_rel_l2(y, ref::to_tensor(want), 3e-7, "hann x3 " + what));
      }
    }
  }
}

TEST(Resample, LowpassAndDownsampleMatchFloat64Reference) {
  uint64_t seed = 400;
  for (int64_t C : {1, 24, 512})
    for (int64_t T : {1, 2, 9, 30, 61})
      for (int K : {11, 12}) {
        const Tensor x = test::random_normal({1, T, C}, ++seed);
        const std::vector<float> f = kaiser_sinc_filter1d(0.25, 0.3, K);
        for (int stride : {1, 2}) {
          const Tensor y = lowpass_filter1d(x, f, stride);
          const ref::Seq want = ref::lowpass(ref::from_tensor(x), ref::to_f64(f), stride);
          EXPECT_TRUE(close_rel_l2(y, ref::to_tensor(want), 2e-7,
                                   "C=" + std::to_string(C) + " T=" + std::to_string(T) +
                                       " K=" + std::to_string(K) + " s=" + std::to_string(stride)));
        }
      }
}

TEST(Resample, MatchesTorchGoldens) {
  const auto g = test::load_fixture("audio_kernels.safetensors");
  const std::vector<float> k11 = kaiser_sinc_filter1d(0.25, 0.3, 11);
  const std::vector<float> k18 = kaiser_sinc_filter1d(0.5 / 3, 0.6 / 3, 18);
  EXPECT_TRUE(close_rel_l2(lowpass_filter1d(g.at("lowpass_k11_s1.x"), k11, 1),
                           g.at("lowpass_k11_s1.out"), 1e-6, "LowPassFilter1d K=11"));
  EXPECT_TRUE(close_rel_l2(downsample1d(g.at("down_r3_k18.x"), k18, 3), g.at("down_r3_k18.out"),
                           1e-6, "DownSample1d r=3"));
  EXPECT_TRUE(
      close_rel_l2(upsample1d(g.at("up_r3_k18.x"), k18, test::kaiser_upsample_geometry(3, 18)),
                   g.at("up_r3_k18.out"), 1e-6, "UpSample1d r=3"));
  EXPECT_TRUE(close_rel_l2(
      upsample1d(g.at("up_hann_x3.x"), hann_sinc_filter1d(3), hann_upsample_geometry(3)),
      g.at("up_hann_x3.out"), 1e-6, "hann UpSample1d x3"));
  const std::vector<float> k12 = kaiser_sinc_filter1d(0.25, 0.3, 12);
  for (const char* c :
       {"aa_sb_c24_t37", "aa_sb_c100_t9", "aa_sb_c1_t3", "aa_sb_c512_t20", "aa_snake_c24_t33"}) {
    const std::string n = c;
    EXPECT_TRUE(close_rel_l2(upsample1d(g.at(n + ".x"), k12, test::kaiser_upsample_geometry(2, 12)),
                             g.at(n + ".up"), 1e-6, n + " UpSample1d"));
    EXPECT_TRUE(close_rel_l2(downsample1d(g.at(n + ".act"), k12, 2), g.at(n + ".out"), 1e-6,
                             n + " DownSample1d"));
  }
}

}  // namespace
}  // namespace meshnn::ops
