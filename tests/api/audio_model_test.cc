// meshnn::AudioModel: the registry finds each model from its files, and the generic calls run it:
// shapes as the specs say, streams equal to one shot, the latent statistics as the config says.
#include "meshnn/audio_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "io/io_test_util.h"
#include "meshnn/core/error.h"
#include "models/model_spec.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/toy_model/toy_model.h"

namespace meshnn {
namespace {

using test::same_bytes;

RunOptions one_device() {
  RunOptions r;
  r.mesh = "1x1";
  r.threads = 1;
  return r;
}

// The built-in families in load order; the test binary also registers the toy model of
// tests/support/toy_model (after them: its rank is the highest).
TEST(AudioModel, RegistryListsEveryModelInLoadOrder) {
  EXPECT_EQ(
      test::toy::builtin_models(),
      (std::vector<std::string>{"minimax-h3-audio-vae", "ltx-audio-decoder", "nvidia-bigvgan"}));
  EXPECT_EQ(AudioModel::registered().back(), test::toy::kRegistryName);
}

// Each family's entry is listed by models/registry.cc; registering a name again (a model added
// from outside src/models) is refused and leaves the registry (and so load()'s order) as it was.
TEST(AudioModel, ANameRegisteredTwiceIsRefused) {
  const std::vector<std::string> before = AudioModel::registered();
  models::ModelSpec again;
  again.name = "ltx-audio-decoder";
  again.rank = -1;  // would come first if it were taken
  EXPECT_THROW(models::register_model_spec(again), std::logic_error);
  EXPECT_EQ(AudioModel::registered(), before);
}

// Every value finite and in [−1, 1] (a decoder's or vocoder's wave).
bool finite_wave(const Tensor& w) {
  for (int64_t i = 0; i < w.numel(); ++i)
    if (!(std::abs(w.data<float>()[i]) <= 1.f)) return false;
  return true;
}

TEST(AudioModel, LtxCheckpointRunsThroughTheRegistry) {
  const std::string path = test::fixture_path("ltx23_small.safetensors");
  const AudioModel m = AudioModel::load(path);
  EXPECT_EQ(m.model(), "ltx-audio-decoder");
  EXPECT_NE(m.description().find("LTX-2.3"), std::string::npos);
  EXPECT_EQ(m.input_spec().layout(), "(1, 8, T, 16)");
  EXPECT_EQ(m.input_spec().frames_per_second, 25.0);
  EXPECT_EQ(m.output_spec().layout(), "(1, 2, T)");
  EXPECT_EQ(m.output_spec().sample_rate, 48000);
  EXPECT_FALSE(m.has_encoder());
  EXPECT_TRUE(m.can_stream());
  const Tensor latent = test::random_normal({1, 8, 7, 16}, 404, 0.8f);
  const Tensor got = m.run(latent, one_device());
  EXPECT_EQ(got.shape(), (Shape{1, 2, m.output_samples(7)}));
  EXPECT_TRUE(finite_wave(got));
  // One shot split over two devices: the same decode to f32 rounding.
  RunOptions two = one_device();
  two.mesh = "1x2";
  EXPECT_TRUE(test::close_rel_l2(m.run(latent, two), got, 1e-5, "1x2 vs 1x1"));
  // (8, T, 16) is batch 1, as audio-decode takes it.
  EXPECT_TRUE(same_bytes(m.run(latent.reshape({8, 7, 16}), one_device()), got));
  // The stream over the same weights: pushes plus flush give the one-shot samples.
  AudioStream s = m.stream();
  Tensor a = s.push(latent.narrow(2, 0, 3)), b = s.push(latent.narrow(2, 3, 4)), c = s.flush();
  const Tensor streamed = concat({a, b, c}, 2);
  EXPECT_TRUE(test::close_rel_l2(streamed, got, 1e-5, "AudioModel stream vs run"));
  try {
    m.encode(got);
    ADD_FAILURE() << "encode on a decoder-only model";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("has no encoder"), std::string::npos) << e.what();
  }
}

TEST(AudioModel, BigVganCheckpointRunsThroughTheRegistry) {
  const std::string path = test::fixture_path("bigvgan_v2_24k_small.safetensors");
  const AudioModel m = AudioModel::load(path);
  EXPECT_EQ(m.model(), "nvidia-bigvgan");
  const nlohmann::json cfg = nlohmann::json::parse(m.config_json());
  const int64_t mels = cfg.at("num_mels").get<int64_t>();
  EXPECT_EQ(m.input_spec().shape, (std::vector<int64_t>{-1, mels, -1}));
  EXPECT_EQ(m.input_spec().layout(), "(B, " + std::to_string(mels) + ", T)");
  EXPECT_EQ(m.output_spec().sample_rate, cfg.at("sampling_rate").get<int>());
  const Tensor mel = test::random_normal({2, mels, 9}, 405, 0.5f);
  const Tensor got = m.run(mel, one_device());
  EXPECT_EQ(got.shape(), (Shape{2, 1, m.output_samples(9)}));
  EXPECT_TRUE(finite_wave(got));
  // The batch items never interact: item 1 alone gives item 1's samples.
  EXPECT_TRUE(
      same_bytes(m.run(mel.narrow(0, 1, 1).clone(), one_device()), got.narrow(0, 1, 1).clone()));
}

TEST(AudioModel, MiniMaxH3FolderDecodesAndEncodesThroughTheRegistry) {
  const std::string dir = test::fixture_path("minimax_h3_tiny");
  const AudioModel m = AudioModel::load(dir);
  EXPECT_EQ(m.model(), "minimax-h3-audio-vae");
  EXPECT_TRUE(m.has_encoder());
  EXPECT_EQ(m.output_spec().sample_rate, 32000);
  const int64_t C = m.input_spec().shape[1];
  const Tensor z = test::random_normal({2, C, 5}, 406, 0.7f);
  const Tensor wave = m.run(z, one_device());
  EXPECT_EQ(wave.shape(), (Shape{2, 1, m.output_samples(5)}));
  EXPECT_TRUE(finite_wave(wave));
  // Stereo as two items: each item alone gives its own samples and latents.
  EXPECT_TRUE(
      same_bytes(m.run(z.narrow(0, 1, 1).clone(), one_device()), wave.narrow(0, 1, 1).clone()));
  const Tensor enc = m.encode(wave, one_device());
  EXPECT_EQ(enc.shape(), z.shape());
  EXPECT_TRUE(same_bytes(m.encode(wave.narrow(0, 0, 1).clone(), one_device()),
                         enc.narrow(0, 0, 1).clone()));
  EXPECT_EQ(AudioModel::identify(dir), "minimax-h3-audio-vae");
}

// The decoder's stream through the registry: equal to one shot for uneven cuts; the batch is fixed
// until flush; the stream outlives the model it came from.
TEST(AudioModel, MiniMaxH3StreamsThroughTheRegistry) {
  const std::string dir = test::fixture_path("minimax_h3_tiny");
  AudioModelOptions dec_only;
  dec_only.decoder_only = true;
  std::optional<AudioModel> m = AudioModel::load(dir, dec_only);
  ASSERT_TRUE(m->can_stream());
  EXPECT_FALSE(m->has_encoder());
  const int64_t C = m->input_spec().shape[1];
  const Tensor z = test::random_normal({2, C, 9}, 408, 0.7f);
  const Tensor one = m->run(z, one_device());
  StreamOptions so;
  so.threads = 1;
  AudioStream s = m->stream(so);
  EXPECT_GT(s.lookahead_frames(), 0);  // the decoder is non-causal
  EXPECT_EQ(s.samples_per_frame(), m->output_samples(1));
  m.reset();  // the stream keeps what it needs
  std::vector<Tensor> got;
  int64_t returned = 0;
  for (const auto& [at, n] : {std::pair<int64_t, int64_t>{0, 2}, {2, 1}, {3, 6}}) {
    got.push_back(s.push(z.narrow(2, at, n).clone()));
    returned += got.back().dim(2);
    // A sample is final once lookahead_frames more frames have arrived, not before.
    EXPECT_LE(returned, (at + n) * s.samples_per_frame());
    EXPECT_EQ(s.frames_pushed(), at + n);
    EXPECT_EQ(s.samples_returned(), returned);
  }
  EXPECT_THROW(s.push(test::random_normal({1, C, 2}, 409)), ShapeError);
  got.push_back(s.flush());
  EXPECT_TRUE(test::close_rel_l2(concat(got, 2), one, 1e-6, "registry stream vs decode"));
  // After the flush a new input may have another batch.
  EXPECT_EQ(s.push(test::random_normal({1, C, 3}, 410)).dim(0), 1);
}

// identify() answers from the files' headers; encoder_only with decoder_only is refused.
TEST(AudioModel, IdentifyNamesTheModelWithoutLoadingIt) {
  EXPECT_EQ(AudioModel::identify(test::fixture_path("ltx23_small.safetensors")),
            "ltx-audio-decoder");
  EXPECT_EQ(AudioModel::identify(test::fixture_path("bigvgan_v2_24k_small.safetensors")),
            "nvidia-bigvgan");
  AudioModelOptions both;
  both.encoder_only = both.decoder_only = true;
  EXPECT_THROW(AudioModel::load(test::fixture_path("minimax_h3_tiny"), both), InvalidArgument);
}

// The encoder side through the registry: the log std, the latent statistics, an encode stream
// (any cut equals one shot), and an encoder-only load; a model without an encoder refuses
// encoder_only before reading its weights.
TEST(AudioModel, EncoderCallsThroughTheRegistry) {
  const std::string dir = test::fixture_path("minimax_h3_tiny");
  AudioModelOptions enc_only;
  enc_only.encoder_only = true;
  const AudioModel m = AudioModel::load(dir, enc_only);
  EXPECT_THROW(m.run(test::random_normal({1, 8, 3}, 1), one_device()), InvalidArgument);
  const Tensor wave = test::random_uniform({2, 1, 1234}, 407, -0.5f, 0.5f);
  Tensor ls;
  const Tensor z = m.encode(wave, one_device(), &ls);
  EXPECT_TRUE(same_bytes(z, m.encode(wave, one_device())));  // log_std changes nothing else
  EXPECT_EQ(ls.shape(), z.shape());
  ASSERT_TRUE(m.has_latent_statistics());
  // The affine and its inverse (AudioModelCalls checks them against float64).
  EXPECT_TRUE(test::close_rel_l2(m.denormalize_latents(m.normalize_latents(z)), z, 1e-6));
  AudioEncodeStream st = m.encode_stream(one_device());
  EXPECT_GT(st.lookahead_samples(), 0);
  std::vector<Tensor> parts, logs;
  for (int64_t at = 0; at < wave.dim(2); at += 300) {
    Tensor l;
    parts.push_back(
        st.push(wave.narrow(2, at, std::min<int64_t>(300, wave.dim(2) - at)).clone(), &l));
    logs.push_back(l);
  }
  Tensor l;
  parts.push_back(st.flush(&l));
  logs.push_back(l);
  EXPECT_TRUE(test::close_rel_l2(concat(parts, 2), z, 1e-6));
  EXPECT_TRUE(test::close_rel_l2(concat(logs, 2), ls, 1e-6));

  const AudioModel ltx = AudioModel::load(test::fixture_path("ltx23_small.safetensors"));
  EXPECT_FALSE(ltx.has_latent_statistics());
  EXPECT_THROW(ltx.normalize_latents(z), InvalidArgument);
  EXPECT_THROW(ltx.encode_stream(), InvalidArgument);
  EXPECT_THROW(AudioModel::load(test::fixture_path("ltx23_small.safetensors"), enc_only),
               InvalidArgument);
}

TEST(AudioModel, AnUnknownFileSaysWhyEachModelRefusedIt) {
  const std::string dir = test::scratch_dir();
  const std::string junk = (std::filesystem::path(dir) / "junk.bin").string();
  std::ofstream(junk) << "this is not a checkpoint of any kind, just some bytes";
  try {
    AudioModel::load(junk);
    ADD_FAILURE() << "a junk file loaded";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    for (const std::string& name : AudioModel::registered())
      EXPECT_NE(msg.find(name + ": "), std::string::npos) << msg;
  }
  EXPECT_THROW(AudioModel::load(dir + "/missing.safetensors"), InvalidArgument);
  EXPECT_THROW(AudioModel::identify(junk), InvalidArgument);  // the same reasons, nothing loaded
}

}  // namespace
}  // namespace meshnn
