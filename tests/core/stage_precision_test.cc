// StagePrecision (meshnn/core/precision.h): the text forms of --precision / precision=, parsed
// strictly, and their resolution against a model's stages.
#include "meshnn/core/stage_precision.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshnn/core/error.h"

namespace meshnn {
namespace {

const std::vector<std::string> kLtx23{"vae", "vocoder", "bwe"};
const std::vector<std::string> kLtx2{"vae", "vocoder"};

using P = Precision;

// The message of the InvalidArgument `f` throws ("" when it throws nothing).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(StagePrecision, AModeMeansEveryStage) {
  for (P p : {P::fp32, P::bf16, P::bf16x2, P::bf16x3}) {
    const StagePrecision sp = StagePrecision::parse(precision_name(p));
    EXPECT_TRUE(sp.is_uniform());
    EXPECT_EQ(sp.resolve(kLtx23, "LTX-2.3"), std::vector<P>(3, p));
    EXPECT_EQ(sp.resolve({"vocoder"}, "BigVGAN"), std::vector<P>{p});
    EXPECT_EQ(sp.uniform("m"), p);
    EXPECT_EQ(sp.str(), precision_name(p));
  }
  // The implicit conversion keeps load(path, Precision::bf16) meaning every stage.
  const StagePrecision from_enum = P::bf16x2;
  EXPECT_EQ(from_enum.resolve(kLtx2, "LTX-2"), std::vector<P>(2, P::bf16x2));
  EXPECT_EQ(StagePrecision().resolve(kLtx23, "LTX-2.3"), std::vector<P>(3, P::fp32));
}

TEST(StagePrecision, PairsSetTheirStagesAndLeaveTheRestFp32) {
  const StagePrecision sp = StagePrecision::parse("vae=bf16,vocoder=bf16x3");
  EXPECT_FALSE(sp.is_uniform());
  EXPECT_EQ(sp.resolve(kLtx23, "LTX-2.3"), (std::vector<P>{P::bf16, P::bf16x3, P::fp32}));
  EXPECT_EQ(sp.resolve(kLtx2, "LTX-2"), (std::vector<P>{P::bf16, P::bf16x3}));
  EXPECT_EQ(sp.str(), "vae=bf16,vocoder=bf16x3");
  // Order does not matter; one stage alone is fine.
  EXPECT_EQ(StagePrecision::parse("bwe=bf16,vae=bf16x2").resolve(kLtx23, "LTX-2.3"),
            (std::vector<P>{P::bf16x2, P::fp32, P::bf16}));
  EXPECT_EQ(StagePrecision::parse("bwe=bf16").resolve(kLtx23, "LTX-2.3"),
            (std::vector<P>{P::fp32, P::fp32, P::bf16}));
  EXPECT_EQ(StagePrecision::parse("vocoder=bf16").resolve({"vocoder"}, "NVIDIA BigVGAN"),
            std::vector<P>{P::bf16});
}

TEST(StagePrecision, PresetEqualsItsSpelledOutForm) {
  const StagePrecision preset = StagePrecision::parse("bf16-safe");
  EXPECT_EQ(preset.str(), "bf16-safe");
  EXPECT_FALSE(preset.is_uniform());
  EXPECT_EQ(preset.resolve(kLtx23, "LTX-2.3"),
            StagePrecision::parse("vae=bf16,vocoder=bf16,bwe=fp32").resolve(kLtx23, "LTX-2.3"));
  EXPECT_EQ(preset.resolve(kLtx23, "LTX-2.3"), (std::vector<P>{P::bf16, P::bf16, P::fp32}));
  // LTX-2 has no BWE: the preset's optional stage is skipped, the rest is bf16.
  EXPECT_EQ(preset.resolve(kLtx2, "LTX-2"), (std::vector<P>{P::bf16, P::bf16}));
  // A model without the mel-VAE (BigVGAN) refuses the LTX preset, naming its stages.
  const std::string e = error_of([&] { preset.resolve({"vocoder"}, "NVIDIA BigVGAN"); });
  EXPECT_TRUE(has(e, "NVIDIA BigVGAN has no stage 'vae'")) << e;
  EXPECT_TRUE(has(e, "its stages: vocoder")) << e;
  EXPECT_EQ(StagePrecision::parse("auto").str(), "auto");
}

// auto: bf16-safe's stages where the CPU multiplies bf16 natively, fp32 where bf16 would be
// emulated (slower than fp32); every stage optional (BigVGAN has only the vocoder); fp32 for a
// single-precision model (no per-stage table). The CPU feature is forced both ways.
TEST(StagePrecision, AutoPicksBf16OnlyOnANativeDatapath) {
  const StagePrecision a = StagePrecision::parse("auto");
  EXPECT_EQ(a.str(), "auto");
  EXPECT_FALSE(a.is_uniform());
  // Native: the measured >= 50 dB stages in bf16, the BWE fp32.
  EXPECT_EQ(a.resolve(kLtx23, "LTX-2.3", true), (std::vector<P>{P::bf16, P::bf16, P::fp32}));
  EXPECT_EQ(a.resolve(kLtx23, "LTX-2.3", true),
            StagePrecision::parse("bf16-safe").resolve(kLtx23, "LTX-2.3", true));
  EXPECT_EQ(a.resolve(kLtx2, "LTX-2", true), (std::vector<P>{P::bf16, P::bf16}));
  EXPECT_EQ(a.resolve({"vocoder"}, "NVIDIA BigVGAN", true), std::vector<P>{P::bf16});
  // Emulated: fp32 everywhere.
  EXPECT_EQ(a.resolve(kLtx23, "LTX-2.3", false), std::vector<P>(3, P::fp32));
  EXPECT_EQ(a.resolve(kLtx2, "LTX-2", false), std::vector<P>(2, P::fp32));
  EXPECT_EQ(a.resolve({"vocoder"}, "NVIDIA BigVGAN", false), std::vector<P>{P::fp32});
  // The two-argument form asks the CPU.
  EXPECT_EQ(a.resolve(kLtx23, "LTX-2.3"), a.resolve(kLtx23, "LTX-2.3", bf16_datapath_native()));
  // MiniMax-H3 (one precision, no table): fp32, not an error.
  EXPECT_EQ(a.uniform("the MiniMax-H3 audio VAE"), P::fp32);
  // auto is a word of its own: not a mode, not a stage's value.
  EXPECT_THROW(parse_precision("auto"), InvalidArgument);
  EXPECT_THROW(StagePrecision::parse("vae=auto"), InvalidArgument);
  EXPECT_THROW(StagePrecision::parse("auto,bwe=fp32"), InvalidArgument);
}

TEST(StagePrecision, OneModeNameTable) {
  // parse_precision, the names and the error texts all read the same table.
  ASSERT_EQ(all_precisions().size(), 4u);
  for (P p : all_precisions()) EXPECT_EQ(parse_precision(precision_name(p)), p);
  EXPECT_EQ(precision_names_text(), "fp32, bf16, bf16x2 or bf16x3");
  const std::string e = error_of([] { parse_precision("fp16"); });
  EXPECT_TRUE(has(e, "fp32, bf16, bf16x2 or bf16x3")) << e;
}

TEST(StagePrecision, StrictParsingNamesTheValidValues) {
  // Unknown stage: the known ones are listed.
  std::string e = error_of([] { StagePrecision::parse("vea=bf16"); });
  EXPECT_TRUE(has(e, "unknown stage 'vea'")) << e;
  EXPECT_TRUE(has(e, "vae, vocoder, bwe")) << e;
  // Duplicate.
  e = error_of([] { StagePrecision::parse("vae=bf16,vocoder=fp32,vae=fp32"); });
  EXPECT_TRUE(has(e, "stage 'vae' is given twice")) << e;
  // Unknown mode for a stage.
  e = error_of([] { StagePrecision::parse("vae=bf8"); });
  EXPECT_TRUE(has(e, "unknown precision mode 'bf8' for stage vae")) << e;
  EXPECT_TRUE(has(e, "fp32, bf16, bf16x2 or bf16x3")) << e;
  // Unknown single word: modes, presets and the pair form are all named.
  e = error_of([] { StagePrecision::parse("fp8"); });
  EXPECT_TRUE(has(e, "unknown precision 'fp8'")) << e;
  EXPECT_TRUE(has(e, "bf16-safe")) << e;
  EXPECT_TRUE(has(e, "bf16x3")) << e;
  EXPECT_TRUE(has(e, "stage=mode")) << e;
  // Malformed lists.
  for (const char* bad :
       {"", "vae=", "=bf16", "vae=bf16,", ",vae=bf16", "vae=bf16,,bwe=fp32", "bf16,bwe=fp32",
        "vae=bf16=bf16", "VAE=bf16", "vae =bf16", "vae=BF16", "bf16-safe,bwe=bf16"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(StagePrecision::parse(bad), InvalidArgument);
  }
  e = error_of([] { StagePrecision::parse("bf16,bwe=fp32"); });
  EXPECT_TRUE(has(e, "entry 'bf16' is not stage=mode")) << e;
}

TEST(StagePrecision, AModelWithoutTheStageRefusesIt) {
  const StagePrecision sp = StagePrecision::parse("vae=bf16,bwe=bf16");
  std::string e = error_of([&] { sp.resolve(kLtx2, "LTX-2"); });
  EXPECT_TRUE(has(e, "LTX-2 has no stage 'bwe' (its stages: vae, vocoder)")) << e;
  e = error_of([] { StagePrecision::parse("vae=bf16").resolve({"vocoder"}, "NVIDIA BigVGAN"); });
  EXPECT_TRUE(has(e, "NVIDIA BigVGAN has no stage 'vae' (its stages: vocoder)")) << e;
  // A single-precision model refuses pairs and presets, not modes.
  e = error_of([] { StagePrecision::parse("vocoder=bf16").uniform("the MiniMax-H3 audio VAE"); });
  EXPECT_TRUE(has(e, "runs one precision for every layer")) << e;
  EXPECT_THROW(StagePrecision::parse("bf16-safe").uniform("x"), InvalidArgument);
}

TEST(StagePrecision, ParsePrecisionStaysModesOnly) {
  EXPECT_EQ(parse_precision("bf16x3"), P::bf16x3);
  EXPECT_THROW(parse_precision("bf16-safe"), InvalidArgument);
  EXPECT_THROW(parse_precision("vae=bf16"), InvalidArgument);
}

}  // namespace
}  // namespace meshnn
