// The LTX-2.3 decode with the fast convolution algorithms (Winograd) against the direct path:
// waveform PSNR ≥ 100 dB, on the small fixture checkpoint with Winograd forced on every stride-1
// conv, and at the real widths (random checkpoint, a short latent) with the default choice; and
// sharded == unsharded with Winograd, within the Winograd rounding (its tiles start at each
// shard's first row, so the tile rounding differs between sharded and unsharded runs).
#include <gtest/gtest.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "layers/conv_algorithm.h"
#include "meshnn/core/cpu.h"
#include "meshnn/io/safetensors.h"
#include "models/common/audio_config.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/random.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::models {
namespace {

// MESHNN_CONV_ALGO for the layers built while it lives (restores the previous value).
class ScopedAlgo {
 public:
  explicit ScopedAlgo(const char* algo) {
    if (const char* e = std::getenv("MESHNN_CONV_ALGO")) old_ = e, had_ = true;
    setenv("MESHNN_CONV_ALGO", algo, 1);
  }
  ~ScopedAlgo() {
    if (had_)
      setenv("MESHNN_CONV_ALGO", old_.c_str(), 1);
    else
      unsetenv("MESHNN_CONV_ALGO");
  }

 private:
  bool had_ = false;
  std::string old_;
};

constexpr double kMinPsnrDb = 100.0;

TEST(LtxFastConv, OverrideIsParsedInOnePlace) {
  {
    ScopedAlgo a("winograd");
    EXPECT_EQ(conv::conv_algo_override(), conv::Conv1dAlgo::winograd);
    EXPECT_EQ(conv::choose_conv1d({96, 96, 7, 1, 3}), conv::Conv1dAlgo::winograd);
    EXPECT_EQ(conv::choose_conv1d({96, 96, 4, 2, 1}),  // strided: oneDNN where AVX-512 runs it
              cpu_features().avx512f ? conv::Conv1dAlgo::onednn : conv::Conv1dAlgo::direct);
  }
  {
    ScopedAlgo a("direct");
    EXPECT_EQ(conv::choose_conv1d({96, 96, 7, 1, 3}), conv::Conv1dAlgo::direct);
    EXPECT_EQ(conv::choose_conv1d({768, 768, 7, 1, 3}), conv::Conv1dAlgo::onednn);
  }
  {
    ScopedAlgo a("onednn");
    EXPECT_EQ(conv::choose_conv1d({24, 24, 7, 1, 3}), conv::Conv1dAlgo::onednn);
  }
  {
    ScopedAlgo a("bogus");
    EXPECT_THROW(conv::conv_algo_override(), InvalidArgument);
  }
}

TEST(LtxFastConv, SmallFixtureWinogradEverywhereVsDirect) {
  const io::SafetensorsFile file =
      io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  const Tensor latent = test::random_normal({1, 8, 11, 16}, 5, 0.8f);
  std::unique_ptr<LtxAudioDecoder> direct, fast;
  {
    ScopedAlgo a("direct");
    direct = LtxAudioDecoder::load(file, Precision::fp32);
  }
  {
    ScopedAlgo a("winograd");
    fast = LtxAudioDecoder::load(file, Precision::fp32);
  }
  const Tensor ref = direct->decode(latent);
  const Tensor got = fast->decode(latent);
  const test::CompareStats st = test::compare(got, ref);
  EXPECT_GE(st.psnr_db, kMinPsnrDb) << "rel L2 " << st.rel_l2;
  std::printf(
      "small fixture, Winograd on every stride-1 conv vs direct: PSNR %.1f dB, rel L2 %.2e\n",
      st.psnr_db, st.rel_l2);

  // Sharded == unsharded with Winograd, as the direct path guarantees (ltx_audio_test.cc).
  struct M {
    int r, c;
    std::vector<int> axes;
  };
  for (const M& m : {M{1, 2, {1}}, M{2, 2, {0, 1}}}) {
    MeshConfig cfg;
    cfg.rows = m.r;
    cfg.cols = m.c;
    cfg.threads_per_device = 1;
    Tensor sharded;
    std::mutex mu;
    {
      ScopedAlgo a("winograd");  // read while the device threads build their decoders
      run_spmd(cfg, [&](Device& d) {
        auto local = LtxAudioDecoder::load(file, Precision::fp32);
        Tensor y = local->decode(latent, TimeShard(d, m.axes));
        if (d.rank() == 0) {
          std::lock_guard<std::mutex> lock(mu);
          sharded = y;
        }
      });
    }
    const std::string what = std::to_string(m.r) + "x" + std::to_string(m.c);
    // Not 1e-6 as on the direct path: each shard's Winograd tiles start at its own first row, so
    // the tile rounding (≤ 1.6e-6 per layer) differs between the runs everywhere, not only at
    // the seams. Measured 1.05e-6 (2x2, F(6,3) for K = 3).
    EXPECT_TRUE(test::close_rel_l2(sharded, got, 4e-6, what));
  }
}

TEST(LtxFastConv, RealWidthsDefaultChoiceVsDirect) {
  // The released LTX-2.3 widths (vocoder 1536 → 24, BWE 512 → 16) with seeded random weights;
  // 3 latent frames (~0.14 s of audio) keep the test short while every layer runs.
  const LtxAudioConfig cfg =
      parse_ltx_audio_config(ltx23_reference_config(), "LTX-2.3 reference config");
  const std::map<std::string, Tensor> state = random_ltx_state(cfg, 3);
  const Tensor latent = test::random_normal({1, 8, 3, 16}, 9, 0.8f);
  Tensor ref, got;
  {
    ScopedAlgo a("direct");
    ref = LtxAudioDecoder(cfg, state, Precision::fp32).decode(latent);
  }
  {
    ScopedAlgo a("auto");
    got = LtxAudioDecoder(cfg, state, Precision::fp32).decode(latent);
  }
  const test::CompareStats st = test::compare(got, ref);
  EXPECT_GE(st.psnr_db, kMinPsnrDb) << "rel L2 " << st.rel_l2;
  std::printf("real widths, default choice vs direct: PSNR %.1f dB, rel L2 %.2e\n", st.psnr_db,
              st.rel_l2);
}

}  // namespace
}  // namespace meshnn::models
