// Per-stage precision of the LTX decoders (meshnn/core/stage_precision.h): a stage set to a mode
// runs exactly as that stage of a model built entirely at that mode, and every other stage exactly
// as fp32 — checked bit for bit by composing the stages of uniform models — and the bf16-safe
// preset is its spelled-out form, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>

#include "meshnn/core/cpu.h"
#include "meshnn/io/safetensors.h"
#include "models/ltx/audio_decoder.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/ltx_stages.h"

namespace meshnn::models {
namespace {

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.data<float>(), b.data<float>(), a.numel() * sizeof(float)) == 0;
}

// A decode against the stages composed by hand. Where bf16 runs natively (AVX512-BF16) they are
// the same arithmetic, bit for bit. Where it is emulated, its layers run on oneDNN's f32 kernels,
// whose summation order follows the shapes they see (decode() hands a stage the previous one's
// padded rows, the composition exactly the real ones): a 1-ulp f32 difference then flips a bf16
// rounding downstream, so the two agree only to bf16's own noise (measured on an AVX2 CPU: max
// |Δ| 1e-3 - 5e-3 at peak 1, against 6e-3 - 2e-2 between bf16 and fp32). There the check is a
// PSNR floor well above "wrong stage at the wrong precision" and below bf16's noise.
::testing::AssertionResult same_decode(const Tensor& y, const Tensor& composed) {
  if (cpu_features().avx512_bf16) {
    if (bit_equal(y, composed)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "not bit-equal (native bf16)";
  }
  if (y.shape() != composed.shape()) return ::testing::AssertionFailure() << "shapes differ";
  const test::CompareStats st = test::compare(y, composed);
  if (st.psnr_db >= 40) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "emulated bf16: PSNR " << st.psnr_db << " dB < 40";
}

struct LtxStagePrecision : ::testing::Test {
  static void SetUpTestSuite() {
    file = new io::SafetensorsFile(
        io::SafetensorsFile::open(test::fixture_path("ltx23_small.safetensors")));
    io = new std::map<std::string, Tensor>(test::load_fixture("ltx23_small_io.safetensors"));
  }
  static void TearDownTestSuite() {
    delete file;
    delete io;
    file = nullptr;
    io = nullptr;
  }
  // The uniform model at mode p (one per mode, loaded once).
  LtxAudioDecoder& uniform(Precision p) {
    auto& m = uniforms[p];
    if (!m) m = LtxAudioDecoder::load(*file, p);
    return *m;
  }
  // The chain run stage by stage, each stage taken from the uniform model at `modes[i]`
  // (vae, vocoder, bwe): what a per-stage model must equal.
  Tensor composed(const std::vector<Precision>& modes) {
    const Tensor& latent = io->at("input.latent");
    const int64_t T = latent.dim(2), M = 4 * T - 3;
    const Tensor mel = LtxDecoderAccess::stage_a(uniform(modes[0]), latent_to_channels_last(latent),
                                                 TimeShard(), T);
    const Tensor wav16 = LtxDecoderAccess::stage_b(
        uniform(modes[1]), LtxAudioDecoder::pack_mel(mel.narrow(1, 0, M)), TimeShard(), M);
    return LtxDecoderAccess::stage_c(uniform(modes[2]), wav16, TimeShard(), wav16.dim(1)).out;
  }
  Tensor decode(const StagePrecision& sp) {
    return LtxAudioDecoder::load(*file, sp)->decode(io->at("input.latent"));
  }
  static io::SafetensorsFile* file;
  static std::map<std::string, Tensor>* io;
  std::map<Precision, std::unique_ptr<LtxAudioDecoder>> uniforms;
};
io::SafetensorsFile* LtxStagePrecision::file = nullptr;
std::map<std::string, Tensor>* LtxStagePrecision::io = nullptr;

TEST_F(LtxStagePrecision, UniformModelsEqualTheirComposedStages) {
  // The reference the per-stage tests rely on: decode() is its stages run one after the other.
  for (Precision p : {Precision::fp32, Precision::bf16}) {
    SCOPED_TRACE(precision_name(p));
    EXPECT_TRUE(same_decode(uniform(p).decode(io->at("input.latent")), composed({p, p, p})));
  }
}

TEST_F(LtxStagePrecision, OnlyTheNamedStagesChange) {
  using P = Precision;
  const Tensor fp32 = decode(P::fp32), bf16 = decode(P::bf16);
  // The fixture's BWE is thin: its convs all take the direct kernel, which runs a bf16 layer in
  // f32 (docs/precision.md "bf16 on our kernels"), so bwe=bf16 equals fp32 there and
  // vae=bf16,vocoder=bf16 equals all-bf16. `fp32_same` / `bf16_same` name those cases.
  struct Case {
    const char* text;
    std::vector<P> modes;  // vae, vocoder, bwe
    bool fp32_same = false, bf16_same = false;
  };
  for (const Case& c : {Case{"vae=bf16", {P::bf16, P::fp32, P::fp32}},
                        Case{"vocoder=bf16", {P::fp32, P::bf16, P::fp32}},
                        Case{"bwe=bf16", {P::fp32, P::fp32, P::bf16}, true},
                        Case{"vae=bf16,vocoder=bf16", {P::bf16, P::bf16, P::fp32}, false, true},
                        Case{"bwe=bf16x3,vae=bf16", {P::bf16, P::fp32, P::bf16x3}}}) {
    SCOPED_TRACE(c.text);
    auto model = LtxAudioDecoder::load(*file, StagePrecision::parse(c.text));
    EXPECT_EQ(model->stage_precisions(), c.modes);
    const Tensor y = model->decode(io->at("input.latent"));
    EXPECT_TRUE(same_decode(y, composed(c.modes)));
    // And it is neither the fp32 nor the all-bf16 decode: the setting took effect, partially.
    EXPECT_EQ(bit_equal(y, fp32), c.fp32_same);
    EXPECT_EQ(bit_equal(y, bf16), c.bf16_same);
  }
}

TEST_F(LtxStagePrecision, PresetIsItsSpelledOutForm) {
  const Tensor preset = decode(StagePrecision::parse("bf16-safe"));
  EXPECT_TRUE(bit_equal(preset, decode(StagePrecision::parse("vae=bf16,vocoder=bf16,bwe=fp32"))));
  EXPECT_TRUE(bit_equal(preset, decode(StagePrecision::parse("vocoder=bf16,vae=bf16"))));
  EXPECT_TRUE(same_decode(preset, composed({Precision::bf16, Precision::bf16, Precision::fp32})));
}

TEST(LtxStagePrecisionLtx2, NoBweStageAndThePresetWithoutIt) {
  const io::SafetensorsFile f =
      io::SafetensorsFile::open(test::fixture_path("ltx2_small.safetensors"));
  EXPECT_THROW(LtxAudioDecoder::load(f, StagePrecision::parse("bwe=bf16")), InvalidArgument);
  auto preset = LtxAudioDecoder::load(f, StagePrecision::parse("bf16-safe"));
  EXPECT_EQ(preset->stage_precisions(), (std::vector<Precision>{Precision::bf16, Precision::bf16}));
  const Tensor latent = test::load_fixture("ltx2_small_io.safetensors").at("input.latent");
  EXPECT_TRUE(
      bit_equal(preset->decode(latent), LtxAudioDecoder::load(f, Precision::bf16)->decode(latent)));
}

}  // namespace
}  // namespace meshnn::models
