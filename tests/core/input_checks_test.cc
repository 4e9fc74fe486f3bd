// The input rules every entry point shares: float dtypes, finiteness with the first bad index,
// thread bounds, LTX latent shape / batch, mesh fit and the memory (auto-chunk) rule.
#include "meshnn/core/input_checks.h"

#include <gtest/gtest.h>

#include <limits>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "models/ltx/audio_decoder.h"

namespace meshnn {
namespace {

using models::LtxAudioDecoder;

Tensor filled(const Shape& s, DType dt) {
  if (dt != DType::f32 && dt != DType::f64) return Tensor::empty(s, dt);  // never read
  Tensor t = Tensor::empty(s, DType::f32);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = 0.25f * static_cast<float>(i % 7) - 0.6f;
  return dt == DType::f32 ? t : t.to(dt);
}

TEST(InputChecks, FloatInputAcceptsF32AndF64Only) {
  EXPECT_EQ(float_input(filled({2, 3}, DType::f64), "x").dtype(), DType::f32);
  EXPECT_EQ(float_input(filled({2, 3}, DType::f32), "x").dtype(), DType::f32);
  for (DType dt : {DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8}) {
    try {
      float_input(filled({2, 3}, dt), "mel.npy");
      ADD_FAILURE() << dtype_name(dt) << " accepted";
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("mel.npy: must be float32 or float64, got"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(InputChecks, CheckFiniteNamesTheFirstBadIndex) {
  Tensor t = filled({2, 3, 4}, DType::f32);
  EXPECT_NO_THROW(check_finite(t, "t"));
  t.data<float>()[1 * 12 + 0 * 4 + 2] = -std::numeric_limits<float>::infinity();
  t.data<float>()[23] = std::numeric_limits<float>::quiet_NaN();
  try {
    check_finite(t, "feats.npy");
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("feats.npy: non-finite value -inf at index (1, 0, 2)"),
              std::string::npos)
        << e.what();
  }
  Tensor d = filled({5}, DType::f64);
  d.data<double>()[4] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(check_finite(d, "d"), InvalidArgument);
}

TEST(InputChecks, ThreadCountBounds) {
  EXPECT_NO_THROW(check_thread_count(0, "--threads"));
  EXPECT_NO_THROW(check_thread_count(max_threads(), "--threads"));
  EXPECT_GE(max_threads(), 64);
  EXPECT_THROW(check_thread_count(-1, "--threads"), InvalidArgument);
  EXPECT_THROW(check_thread_count(100000, "--threads"), InvalidArgument);
}

TEST(InputChecks, LtxLatentBatchAndShapeBeforeAnyWork) {
  EXPECT_EQ(models::ltx_latent_shape({8, 5, 16}, "l"), (Shape{1, 8, 5, 16}));
  EXPECT_EQ(models::ltx_latent_shape({1, 8, 5, 16}, "l"), (Shape{1, 8, 5, 16}));
  EXPECT_THROW(models::ltx_latent_shape({2, 8, 5, 16}, "l"), ShapeError);
  EXPECT_THROW(models::ltx_latent_shape({1, 8, 5, 12}, "l"), ShapeError);
  EXPECT_THROW(models::ltx_latent_shape({1, 8, 0, 16}, "l"), ShapeError);
  EXPECT_THROW(models::ltx_latent_shape({8, 16}, "l"), ShapeError);
}

TEST(InputChecks, MeshFitAndMemoryRule) {
  // Without weights only the split itself is checked: every device a real frame (the loaded
  // model's halos: tests/graph/min_shard_rows_test.cc).
  // (AudioModel::check_input with the model named: no file read.)
  const auto check_mesh_fits = [](int64_t frames, int devices) {
    RunOptions run;
    run.mesh = "1x" + std::to_string(devices);
    AudioModelOptions ltx;
    ltx.model = "ltx-audio-decoder";
    AudioModel::check_input("", {1, 8, frames, 16}, run, ltx);
  };
  EXPECT_NO_THROW(check_mesh_fits(5, 5));
  try {
    check_mesh_fits(5, 8);
    ADD_FAILURE();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 5 device(s) fit"), std::string::npos) << e.what();
  }
  EXPECT_EQ(LtxAudioDecoder::auto_chunk_frames(LtxAudioDecoder::kAutoChunkAboveFrames), 0);
  EXPECT_EQ(LtxAudioDecoder::auto_chunk_frames(LtxAudioDecoder::kAutoChunkAboveFrames + 1),
            LtxAudioDecoder::kAutoChunkFrames);
}

}  // namespace
}  // namespace meshnn
