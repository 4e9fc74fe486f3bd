// meshnn::AudioModel's calls beyond load / run / encode (what the Python facades are built on):
// a forced model, random weights, config and per-stage precisions, chunked runs, stage streams,
// latent statistics (against a float64 reference) and the encode stream's reset and properties.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::same_bytes;

RunOptions one_device() {
  RunOptions r;
  r.mesh = "1x1";
  r.threads = 1;
  return r;
}

StreamOptions one_stream() {
  StreamOptions o;
  o.threads = 1;
  return o;
}

TEST(AudioModelCalls, AForcedModelLoadsWithItsOwnLoaderOrRefuses) {
  const std::string ltx = test::fixture_path("ltx23_small.safetensors");
  AudioModelOptions o;
  o.model = "ltx-audio-decoder";
  const AudioModel m = AudioModel::load(ltx, o);
  EXPECT_EQ(m.variant(), "ltx-2.3");
  EXPECT_EQ(AudioModel::identify(ltx, o), "ltx-audio-decoder");
  o.model = "nvidia-bigvgan";  // an LTX file is no vocoder checkpoint: BigVGAN's loader says so
  EXPECT_THROW(AudioModel::load(ltx, o), Error);
  o.model = "no-such-model";
  EXPECT_THROW(AudioModel::load(ltx, o), InvalidArgument);
}

TEST(AudioModelCalls, RandomWeightsAreSeededAndOnlyWhereAModelHasThem) {
  const AudioModel a = AudioModel::random("ltx-audio-decoder", 3);
  const AudioModel b = AudioModel::random("ltx-audio-decoder", 3);
  const AudioModel c = AudioModel::random("ltx-audio-decoder", 4);
  EXPECT_EQ(a.variant(), "ltx-2.3");
  EXPECT_GT(a.parameters(), 1'000'000);
  EXPECT_NE(a.config_json().find("audio_vae"), std::string::npos);
  const Tensor z = test::random_normal({1, 8, 2, 16}, 501, 0.8f);
  const Tensor ya = a.run(z, one_device());
  EXPECT_TRUE(same_bytes(ya, b.run(z, one_device())));
  EXPECT_FALSE(same_bytes(ya, c.run(z, one_device())));
  // The catalog knows the built model's input before it is built.
  for (const AudioModelEntry& e : AudioModel::catalog()) {
    if (e.name != a.model()) continue;
    EXPECT_TRUE(e.has_random);
    const AudioIoSpec &want = a.input_spec(), &got = e.random_input;
    EXPECT_EQ(got.what, want.what);
    EXPECT_EQ(got.shape, want.shape);
    EXPECT_EQ(got.time_axis, want.time_axis);
    EXPECT_EQ(got.frames_per_second, want.frames_per_second);
    EXPECT_EQ(got.sample_rate, want.sample_rate);
  }
  EXPECT_THROW(AudioModel::random("nvidia-bigvgan", 0), InvalidArgument);
  EXPECT_THROW(AudioModel::random("no-such-model", 0), InvalidArgument);
}

// catalog() describes each registered model, in registered()'s order, as loading one shows it:
// its input, its encoder; only a model marked with random weights builds them.
TEST(AudioModelCalls, CatalogDescribesEachModelAsItsLoadShowsIt) {
  const std::vector<AudioModelEntry> catalog = AudioModel::catalog();
  std::vector<std::string> names;
  for (const AudioModelEntry& e : catalog) {
    names.push_back(e.name);
    EXPECT_TRUE(e.input == "latent" || e.input == "mel") << e.name << ": " << e.input;
    EXPECT_FALSE(e.path.empty()) << e.name;
    if (!e.has_random) {
      EXPECT_THROW(AudioModel::random(e.name, 0), InvalidArgument) << e.name;
    }
  }
  EXPECT_EQ(names, AudioModel::registered());
  for (const char* fixture :
       {"ltx23_small.safetensors", "bigvgan_v2_24k_small.safetensors", "minimax_h3_tiny"}) {
    const std::string path = test::fixture_path(fixture);
    const AudioModel m = AudioModel::load(path);
    const auto e = std::find_if(catalog.begin(), catalog.end(),
                                [&](const AudioModelEntry& x) { return x.name == m.model(); });
    ASSERT_NE(e, catalog.end()) << fixture;
    EXPECT_EQ(e->input, m.input_spec().what) << fixture;
    EXPECT_EQ(e->has_encoder, m.has_encoder()) << fixture;
  }
}

// check_input for a model named in the options needs no path (the input of a random() model):
// the same refusal as for a path of that model, the same pass.
TEST(AudioModelCalls, CheckInputForANamedModelNeedsNoPath) {
  const std::string path = test::fixture_path("ltx23_small.safetensors");
  RunOptions r = one_device();
  r.mesh = "1x8";
  AudioModelOptions named;
  named.model = "ltx-audio-decoder";
  auto refusal = [&](const std::function<void()>& check) -> std::string {
    try {
      check();
    } catch (const ShapeError& e) {
      return e.what();
    }
    return "";
  };
  const std::string by_path = refusal([&] { AudioModel::check_input(path, {1, 8, 5, 16}, r); });
  EXPECT_NE(by_path.find("cannot be split over 8 devices"), std::string::npos) << by_path;
  EXPECT_EQ(refusal([&] { AudioModel::check_input("", {1, 8, 5, 16}, r, named); }), by_path);
  r.mesh = "1x2";
  EXPECT_NO_THROW(AudioModel::check_input("", {1, 8, 5, 16}, r, named));
  EXPECT_THROW(AudioModel::check_input("", {1, 7, 5, 16}, r, named), ShapeError);
  EXPECT_THROW(AudioModel::check_input("", {1, 8, 5, 16}, r), Error);  // no path, no model
}

TEST(AudioModelCalls, ConfigAndStagePrecisionsAreWhatWasLoaded) {
  AudioModelOptions o;
  o.precision = StagePrecision::parse("bf16-safe");
  const AudioModel ltx = AudioModel::load(test::fixture_path("ltx23_small.safetensors"), o);
  using Stages = std::vector<std::pair<std::string, Precision>>;
  EXPECT_EQ(
      ltx.stage_precisions(),
      (Stages{{"vae", Precision::bf16}, {"vocoder", Precision::bf16}, {"bwe", Precision::fp32}}));
  o.precision = Precision::bf16;
  const AudioModel voc =
      AudioModel::load(test::fixture_path("bigvgan_v2_24k_small.safetensors"), o);
  EXPECT_EQ(voc.stage_precisions(), (Stages{{"vocoder", Precision::bf16}}));
  EXPECT_NE(voc.config_json().find("num_mels"), std::string::npos);
  EXPECT_THROW(voc.parameters(), InvalidArgument);
  const AudioModel h3 = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  EXPECT_TRUE(h3.stage_precisions().empty());
  EXPECT_NE(h3.config_json().find("AutoencoderKLMiniMaxH3Audio"), std::string::npos);
}

TEST(AudioModelCalls, ChunkedRunEqualsOneShotAndStageStreamEqualsTheVocoderStream) {
  const std::string path = test::fixture_path("ltx23_small.safetensors");
  const AudioModel m = AudioModel::load(path);
  const Tensor z = test::random_normal({1, 8, 7, 16}, 502, 0.8f);
  const Tensor one = m.run(z, one_device());
  EXPECT_TRUE(test::close_rel_l2(m.run_chunked(z, 3, one_device()), one, 1e-5));
  EXPECT_THROW(m.run_chunked(z, 0, one_device()), InvalidArgument);
  const Tensor mel = test::random_uniform({1, 2, 9, 64}, 503, -5.f, 1.f);
  AudioStream s = m.stage_stream("vocoder", one_stream());
  const Tensor got = concat(
      {s.push(mel.narrow(2, 0, 4).clone()), s.push(mel.narrow(2, 4, 5).clone()), s.flush()}, 2);
  AudioStream ref = m.stage_stream("vocoder", one_stream());  // the whole input in one push
  const Tensor want = concat({ref.push(mel), ref.flush()}, 2);
  EXPECT_TRUE(test::close_rel_l2(got, want, 1e-5));  // other cuts: f32 rounding
  EXPECT_THROW(m.stage_stream("vae", one_stream()), InvalidArgument);
  const AudioModel h3 = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  EXPECT_THROW(h3.run_chunked(test::random_normal({1, 8, 4}, 504), 2), InvalidArgument);
  EXPECT_THROW(h3.stage_stream("vocoder", one_stream()), InvalidArgument);
}

// normalize_latents against (z − mean) / std in float64; the round trip; non-finite in and out.
TEST(AudioModelCalls, LatentStatisticsRoundTripAgainstFloat64) {
  const AudioModel m = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  const std::vector<float> mean = m.latents_mean(), stdv = m.latents_std();
  const int64_t C = m.input_spec().shape[1];
  ASSERT_EQ(static_cast<int64_t>(mean.size()), C);
  ASSERT_EQ(static_cast<int64_t>(stdv.size()), C);
  const Tensor z = test::random_normal({2, C, 5}, 505, 1.5f);
  const Tensor n = m.normalize_latents(z);
  const float* pz = z.data<float>();
  const float* pn = n.data<float>();
  for (int64_t i = 0; i < z.numel(); ++i) {
    const int64_t c = (i / 5) % C;
    const double want = (static_cast<double>(pz[i]) - mean[c]) / stdv[c];
    EXPECT_NEAR(pn[i], want, 1e-6 * (1 + std::abs(want))) << i;
  }
  EXPECT_TRUE(test::close_rel_l2(m.denormalize_latents(n), z, 1e-6));
  Tensor bad = z.clone();
  bad.data<float>()[7] = std::nanf("");
  EXPECT_THROW(m.normalize_latents(bad), InvalidArgument);
  Tensor huge = z.clone();
  std::fill(huge.data<float>(), huge.data<float>() + huge.numel(), 3e38f);
  EXPECT_THROW(m.denormalize_latents(huge), NumericalError);  // every std > 1 in the fixture
  EXPECT_TRUE(
      AudioModel::load(test::fixture_path("ltx23_small.safetensors")).latents_mean().empty());
}

// Random cuts pushed into the encode stream equal encode(); reset() drops a partial input.
TEST(AudioModelCalls, EncodeStreamEqualsEncodeOnRandomCutsAfterAReset) {
  const AudioModel m = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  const Tensor wave = test::random_uniform({2, 1, 40 * 11 + 13}, 506, -0.5f, 0.5f);
  Tensor logs;
  const Tensor mean = m.encode(wave, one_device(), &logs);
  AudioEncodeStream st = m.encode_stream(one_device());
  EXPECT_EQ(st.sample_rate(), m.output_spec().sample_rate);
  EXPECT_EQ(st.samples_per_frame(), m.output_samples(1));
  EXPECT_EQ(st.mesh(), "1x1");
  st.push(wave.narrow(2, 0, 77).clone());
  st.reset();
  std::mt19937 gen(507);
  std::vector<int64_t> cuts = {0, wave.dim(2)};
  for (int i = 0; i < 6; ++i)
    cuts.push_back(std::uniform_int_distribution<int64_t>(1, wave.dim(2) - 1)(gen));
  std::sort(cuts.begin(), cuts.end());
  std::vector<Tensor> parts, part_logs;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Tensor l;
    parts.push_back(st.push(wave.narrow(2, cuts[i], cuts[i + 1] - cuts[i]).clone(), &l));
    part_logs.push_back(l);
  }
  Tensor l;
  parts.push_back(st.flush(&l));
  part_logs.push_back(l);
  EXPECT_TRUE(test::close_rel_l2(concat(parts, 2), mean, 1e-6));
  EXPECT_TRUE(test::close_rel_l2(concat(part_logs, 2), logs, 1e-6));
}

}  // namespace
}  // namespace meshnn
