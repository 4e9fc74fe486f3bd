// LTX-2.3 / LTX-2 audio decode against the PyTorch goldens of tools/goldens/gen_ltx_audio.py
// (reduced-width checkpoints in the real format, every stage's output), and sharded == unsharded.
#include <gtest/gtest.h>

#include <mutex>

#include "meshnn/io/safetensors.h"
#include "models/ltx/audio_decoder.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/ltx_stages.h"

namespace meshnn::models {
namespace {

// (B, C, T) planar → (B, T, C) channels-last.
Tensor planar_to_cl(const Tensor& x) {
  const int64_t B = x.dim(0), C = x.dim(1), T = x.dim(2);
  Tensor y = Tensor::empty({B, T, C});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t t = 0; t < T; ++t)
        y.data<float>()[(b * T + t) * C + c] = x.data<float>()[(b * C + c) * T + t];
  return y;
}
// (B, C, H, W) → (B, H, W, C).
Tensor nchw_to_nhwc(const Tensor& x) {
  const int64_t B = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  Tensor y = Tensor::empty({B, H, W, C});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          y.data<float>()[((b * H + h) * W + w) * C + c] =
              x.data<float>()[((b * C + c) * H + h) * W + w];
  return y;
}

struct Ltx23 : ::testing::Test {
  static void SetUpTestSuite() {
    file = new io::SafetensorsFile(
        io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors")));
    io = new std::map<std::string, Tensor>(test::load_fixture("ltx23_small_io.safetensors"));
  }
  static void TearDownTestSuite() {
    delete file;
    delete io;
  }
  static io::SafetensorsFile* file;
  static std::map<std::string, Tensor>* io;
};
io::SafetensorsFile* Ltx23::file = nullptr;
std::map<std::string, Tensor>* Ltx23::io = nullptr;

TEST_F(Ltx23, ConfigAndVersionFromMetadata) {
  auto dec = LtxAudioDecoder::load(*file, Precision::fp32);
  EXPECT_EQ(dec->config().version, LtxAudioConfig::Version::ltx23);
  EXPECT_EQ(dec->sample_rate(), 48000);
  EXPECT_EQ(dec->output_samples(3), 4320);
}

TEST_F(Ltx23, EachStageMatchesPyTorch) {
  auto dec = LtxAudioDecoder::load(*file, Precision::fp32);
  const Tensor& latent = io->at("input.latent");
  const int64_t T = latent.dim(2), M = 4 * T - 3;
  Tensor mel = LtxDecoderAccess::stage_a(*dec, latent_to_channels_last(latent), TimeShard(), T);
  EXPECT_TRUE(test::close_rel_l2(mel.narrow(1, 0, M), nchw_to_nhwc(io->at("stage_a.out")), 1e-5,
                                 "stage A"));

  // Stage B from the golden Stage A output, so stages are tested in isolation.
  Tensor mel_in = LtxAudioDecoder::pack_mel(nchw_to_nhwc(io->at("stage_a.out")));
  Tensor wav16 = LtxDecoderAccess::stage_b(*dec, mel_in, TimeShard(), M);
  EXPECT_TRUE(test::close_rel_l2(wav16, planar_to_cl(io->at("stage_b.out")), 1e-5, "stage B"));

  auto c =
      LtxDecoderAccess::stage_c(*dec, planar_to_cl(io->at("stage_b.out")), TimeShard(), 160 * M);
  // log-mel golden (B, 2, 64, F) → ours (B, F, 2·64) with channel s·64 + m.
  const Tensor& lm = io->at("stage_c.log_mel");
  Tensor lm_cl = planar_to_cl(lm.reshape({1, 128, lm.dim(3)}));
  EXPECT_TRUE(test::close_rel_l2(c.log_mel, lm_cl, 1e-5, "stage C log-mel"));
  EXPECT_TRUE(
      test::close_rel_l2(c.skip, planar_to_cl(io->at("stage_c.skip")), 1e-5, "stage C skip"));
  EXPECT_TRUE(test::close_rel_l2(c.residual, planar_to_cl(io->at("stage_c.residual")), 1e-5,
                                 "stage C residual"));
  EXPECT_TRUE(test::close_rel_l2(c.out, planar_to_cl(io->at("output")), 1e-5, "stage C out"));
}

TEST_F(Ltx23, EndToEndAgainstFloat64Reference) {
  auto dec = LtxAudioDecoder::load(*file, Precision::fp32);
  Tensor out = dec->decode(io->at("input.latent"));
  const test::CompareStats st = test::compare(out, planar_to_cl(io->at("ref64.output")));
  std::printf("end to end: rel L2 %.3g vs the float64 reference, %.3g vs torch f32\n", st.rel_l2,
              test::compare(out, planar_to_cl(io->at("output"))).rel_l2);
  EXPECT_GE(st.psnr_db, 60.0);
  EXPECT_TRUE(
      test::close_rel_l2(out, planar_to_cl(io->at("output")), 1e-5, "end to end vs torch f32"));
  Tensor edge = dec->decode(io->at("edge_t1.input.latent"));
  EXPECT_TRUE(test::close_rel_l2(edge, planar_to_cl(io->at("edge_t1.output")), 1e-5, "T = 1"));
}

TEST_F(Ltx23, ShardedEqualsUnsharded) {
  // A longer random latent so that 4 devices get ≥ 2 frames each.
  Tensor latent = test::random_normal({1, 8, 11, 16}, 77, 0.8f);
  auto dec = LtxAudioDecoder::load(*file, Precision::fp32);
  Tensor ref = dec->decode(latent);
  struct M {
    int r, c;
    std::vector<int> axes;
  };
  for (const M& m : {M{1, 2, {1}}, M{2, 1, {0}}, M{2, 2, {0, 1}}, M{1, 4, {1}}}) {
    MeshConfig cfg;
    cfg.rows = m.r;
    cfg.cols = m.c;
    cfg.threads_per_device = 1;
    Tensor got;
    std::mutex mu;
    run_spmd(cfg, [&](Device& d) {
      auto local = LtxAudioDecoder::load(*file, Precision::fp32);
      Tensor y = local->decode(latent, TimeShard(d, m.axes));
      if (d.rank() == 0) {
        std::lock_guard<std::mutex> lock(mu);
        got = y;
      }
    });
    const std::string what = std::to_string(m.r) + "x" + std::to_string(m.c);
    EXPECT_TRUE(test::close_rel_l2(got, ref, 1e-6, what));
    // Seam rows of the 48 kHz output: every shard boundary ± 64 samples.
    const int64_t per = 4 * ((11 + m.r * m.c - 1) / (m.r * m.c)) * 480;
    for (int64_t b = per; b < ref.dim(1); b += per) {
      const int64_t lo = b - 64, len = std::min<int64_t>(128, ref.dim(1) - lo);
      EXPECT_TRUE(test::close_rel_l2(got.narrow(1, lo, len), ref.narrow(1, lo, len), 1e-5,
                                     what + " seam at " + std::to_string(b)));
    }
  }
}

TEST_F(Ltx23, BadInputIsAClearError) {
  auto dec = LtxAudioDecoder::load(*file, Precision::fp32);
  EXPECT_THROW(dec->decode(Tensor({1, 7, 3, 16})), ShapeError);
  Tensor nan = test::random_normal({1, 8, 3, 16}, 1);
  nan.data<float>()[100] = std::numeric_limits<float>::quiet_NaN();
  try {
    dec->decode(nan);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("(0, 2, 0, 4)"), std::string::npos) << e.what();
  }
  // Too many devices for the sequence.
  MeshConfig cfg;
  cfg.cols = 4;
  EXPECT_THROW(run_spmd(cfg,
                        [&](Device& d) {
                          auto local = LtxAudioDecoder::load(*file, Precision::fp32);
                          local->decode(test::random_normal({1, 8, 5, 16}, 2), TimeShard(d, {1}));
                        }),
               ShapeError);
}

TEST(Ltx2, HifiGanVariantMatchesPyTorch) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx2_small.safetensors"));
  auto io = test::load_fixture("ltx2_small_io.safetensors");
  auto dec = LtxAudioDecoder::load(file, Precision::fp32);
  EXPECT_EQ(dec->config().version, LtxAudioConfig::Version::ltx2);
  EXPECT_EQ(dec->sample_rate(), 24000);
  Tensor out = dec->decode(io.at("input.latent"));
  EXPECT_TRUE(test::close_rel_l2(out, planar_to_cl(io.at("output")), 1e-5, "LTX-2 output"));
}

TEST(LtxConfig, RejectsWhatItCannotRun) {
  nlohmann::json c = ltx23_reference_config();
  EXPECT_NO_THROW(parse_ltx_audio_config(c, "ref"));
  auto bad = c;
  bad["vocoder"]["vocoder"]["resblock"] = "1";
  EXPECT_THROW(parse_ltx_audio_config(bad, "x"), InvalidArgument);
  bad = c;
  bad["audio_vae"]["model"]["params"]["ddconfig"]["norm_type"] = "group";
  EXPECT_THROW(parse_ltx_audio_config(bad, "x"), InvalidArgument);
  bad = c;
  bad["vocoder"]["bwe"]["new_arch_knob"] = 3;
  try {
    parse_ltx_audio_config(bad, "x");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("new_arch_knob"), std::string::npos);
  }
  bad = c;
  bad["vocoder"].erase("bwe");  // nested layout without bwe: not an LTX-2 flat config either
  EXPECT_THROW(parse_ltx_audio_config(bad, "x"), InvalidArgument);
}

}  // namespace
}  // namespace meshnn::models

namespace meshnn::models {
namespace {

// Waveform PSNR of each precision mode against the float64 PyTorch run (docs/precision.md).
// Bounds sit below the measured values with margin; the ordering is the real assertion.
TEST(LtxPrecision, ModesOrderedByPsnr) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  auto io = test::load_fixture("ltx23_small_io.safetensors");
  const Tensor& ref = io.at("ref64.output");
  Tensor ref_cl = Tensor::empty({1, ref.dim(2), 2});
  for (int64_t t = 0; t < ref.dim(2); ++t)
    for (int64_t c = 0; c < 2; ++c)
      ref_cl.data<float>()[t * 2 + c] = ref.to(DType::f32).data<float>()[c * ref.dim(2) + t];
  std::vector<double> psnr;
  for (Precision p : {Precision::fp32, Precision::bf16x3, Precision::bf16x2, Precision::bf16}) {
    auto dec = LtxAudioDecoder::load(file, p);
    const double db = test::compare(dec->decode(io.at("input.latent")), ref_cl).psnr_db;
    std::printf("[ precision ] LTX-2.3 small, %s: waveform PSNR %.1f dB vs float64\n",
                precision_name(p), db);
    psnr.push_back(db);
  }
  EXPECT_GE(psnr[0], 60.0);
  EXPECT_GE(psnr[0], psnr[1] - 1.0);  // fp32 and bf16x3 are both near f32 rounding
  EXPECT_GT(psnr[1], psnr[2]);
  EXPECT_GT(psnr[1], psnr[3]);
  // bf16x2 runs oneDNN's bf16 conv on every layer; bf16 runs our kernels (bf16 Winograd operands,
  // the thin and strided layers in f32: docs/precision.md), so neither orders the other. Both stay
  // within bf16's noise band (measured 50.7 / 52.5 dB).
  EXPECT_GE(psnr[2], 45.0);
  EXPECT_GE(psnr[3], 45.0);
}

}  // namespace
}  // namespace meshnn::models

namespace meshnn::models {
namespace {

// A checkpoint with keys removed and one misshaped: one WeightError listing them all.
TEST(LtxCheckpoint, ListsEveryMissingKey) {
  auto file = io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors"));
  std::map<std::string, Tensor> st;
  for (const std::string& k : file.keys()) st[k] = file.get(k);
  st.erase("vocoder.vocoder.conv_pre.weight");
  st.erase("audio_vae.decoder.conv_in.conv.bias");
  st["vocoder.mel_stft.mel_basis"] = Tensor({3, 3});
  const std::string path = std::string(MESHNN_BINARY_DIR) + "/broken_ltx.safetensors";
  io::save_safetensors(path, st, file.metadata());
  try {
    LtxAudioDecoder::load(io::SafetensorsFile::open(path), Precision::fp32);
    FAIL() << "no error";
  } catch (const WeightError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("3 checkpoint key problem"), std::string::npos) << m;
    EXPECT_NE(m.find("vocoder.vocoder.conv_pre.weight"), std::string::npos) << m;
    EXPECT_NE(m.find("audio_vae.decoder.conv_in.conv.bias"), std::string::npos) << m;
    EXPECT_NE(m.find("vocoder.mel_stft.mel_basis' has shape (3, 3)"), std::string::npos) << m;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace meshnn::models
