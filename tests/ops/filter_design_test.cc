#include "meshnn/ops/filter_design.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "support/activation_ref.h"
#include "support/fixtures.h"

namespace meshnn::ops {
namespace {

TEST(FilterDesign, BigVganKaiserTapsMatchTheSpec) {
  // bigvgan.md §4: A = 51.02124, β = 4.663800, taps listed to 8 decimals (double precision).
  EXPECT_NEAR(kaiser_beta(0.3, 12), 4.663800, 5e-7);
  const std::vector<double> f = kaiser_sinc_filter1d_f64(0.25, 0.3, 12);
  const double spec[12] = {0.00202897,  0.00938946,  -0.02554346, -0.05765738,
                           0.12857261,  0.44320980,  0.44320980,  0.12857261,
                           -0.05765738, -0.02554346, 0.00938946,  0.00202897};
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(f[k], spec[k], 6e-9) << "tap " << k;
  EXPECT_NEAR(std::accumulate(f.begin(), f.end(), 0.0), 1.0, 1e-15);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(f[k], f[11 - k], 1e-16) << "symmetry, tap " << k;
}

TEST(FilterDesign, KaiserMatchesTorchGoldens) {
  const auto g = test::load_fixture("audio_kernels.safetensors");
  struct Case {
    const char* key;
    double cutoff, half_width;
    int k;
  };
  for (const Case c :
       {Case{"filter.kaiser_12", 0.25, 0.3, 12}, Case{"filter.kaiser_11", 0.25, 0.3, 11},
        Case{"filter.kaiser_18", 0.5 / 3, 0.6 / 3, 18}, Case{"filter.kaiser_7", 0.4, 0.05, 7},
        Case{"filter.kaiser_4", 0.2, 0.2, 4}}) {
    const Tensor& t = g.at(c.key);
    ASSERT_EQ(t.numel(), c.k) << c.key;
    const std::vector<float> f = kaiser_sinc_filter1d(c.cutoff, c.half_width, c.k);
    // torch builds the taps in f32 (kaiser_window, sinc, sum); ours are the double taps rounded
    // once.
    for (int n = 0; n < c.k; ++n)
      EXPECT_NEAR(f[n], t.data<float>()[n], 1e-7) << c.key << " tap " << n;
  }
}

TEST(FilterDesign, KaiserBetaBranches) {
  // A > 50 → 0.1102(A − 8.7); 21 ≤ A ≤ 50 → 0.5842(A − 21)^0.4 + 0.07886(A − 21); A < 21 → 0.
  const double a_mid = 2.285 * (6 - 1) * M_PI * 0.8 + 7.95;  // K = 12, half_width = 0.2: A ≈ 36.7
  ASSERT_GT(a_mid, 21.0);
  ASSERT_LT(a_mid, 50.0);
  EXPECT_NEAR(kaiser_beta(0.2, 12), 0.5842 * std::pow(a_mid - 21, 0.4) + 0.07886 * (a_mid - 21),
              1e-12);
  EXPECT_EQ(kaiser_beta(0.05, 4), 0.0);
}

TEST(FilterDesign, HannSincX3MatchesLtxSpec) {
  // ltx2_audio_decode.md §6.4: 43 taps, centre 0.33, end taps ≈ 0, per-phase DC gains 1.00004
  // / 1.00068.
  const std::vector<double> h = hann_sinc_filter1d_f64(3);
  ASSERT_EQ(h.size(), 43u);
  EXPECT_NEAR(h[21], 0.33, 1e-15);
  for (int n : {0, 1, 2, 40, 41, 42}) EXPECT_LT(std::abs(h[n]), 1e-30) << n;
  double gain[3] = {0, 0, 0};
  for (int n = 0; n < 43; ++n) gain[n % 3] += 3 * h[n];
  EXPECT_NEAR(gain[0], 1.00004, 1e-5);
  EXPECT_NEAR(gain[1], 1.00068, 1e-5);
  EXPECT_NEAR(gain[2], 1.00068, 1e-5);
  const auto fixture = test::load_fixture("audio_kernels.safetensors");
  const Tensor& t = fixture.at("filter.hann_x3");
  const std::vector<float> f = hann_sinc_filter1d(3);
  for (int n = 0; n < 43; ++n) EXPECT_NEAR(f[n], t.data<float>()[n], 1e-7) << "tap " << n;
  const UpsampleGeometry g = hann_upsample_geometry(3);
  EXPECT_EQ(g.kernel_size, 43);
  EXPECT_EQ(g.pad, 7);
  EXPECT_EQ(g.pad_left, 42);
  EXPECT_EQ(g.pad_right, 40);
}

TEST(FilterDesign, KaiserUpsampleGeometry) {
  const UpsampleGeometry g = test::kaiser_upsample_geometry(2, 12);
  EXPECT_EQ(g.pad, 5);
  EXPECT_EQ(g.pad_left, 15);
  EXPECT_EQ(g.pad_right, 15);
  const UpsampleGeometry g3 = test::kaiser_upsample_geometry(3, 18);
  EXPECT_EQ(g3.pad, 5);
  EXPECT_EQ(g3.pad_left, 22);
  EXPECT_EQ(g3.pad_right, 23);
}

TEST(FilterDesign, BadArguments) {
  EXPECT_THROW(kaiser_sinc_filter1d(0.0, 0.3, 12), InvalidArgument);
  EXPECT_THROW(kaiser_sinc_filter1d(0.6, 0.3, 12), InvalidArgument);
  EXPECT_THROW(kaiser_sinc_filter1d(0.25, 0.3, 0), InvalidArgument);
  EXPECT_THROW(kaiser_sinc_filter1d(0.25, -1.0, 12), InvalidArgument);
  EXPECT_THROW(hann_sinc_filter1d(0), InvalidArgument);
  EXPECT_THROW(test::kaiser_upsample_geometry(4, 2), InvalidArgument);
}

}  // namespace
}  // namespace meshnn::ops
