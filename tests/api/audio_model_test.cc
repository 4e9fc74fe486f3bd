// meshnn::AudioModel: the registry finds each model from its files, and the generic calls give
// exactly what the model's typed class gives.
#include "meshnn/audio_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "io/io_test_util.h"
#include "meshnn/core/error.h"
#include "models/bigvgan/typed_model.h"
#include "models/ltx/typed_model.h"
#include "models/minimax_h3/typed_model.h"
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

TEST(AudioModel, LtxCheckpointRunsAsItsTypedDecoder) {
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
  EXPECT_TRUE(same_bytes(got, LtxAudioDecoder::load(path).decode(latent, one_device())));
  EXPECT_EQ(got.dim(2), m.output_samples(7));
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

TEST(AudioModel, BigVganCheckpointRunsAsItsTypedVocoder) {
  const std::string path = test::fixture_path("bigvgan_v2_24k_small.safetensors");
  const AudioModel m = AudioModel::load(path);
  EXPECT_EQ(m.model(), "nvidia-bigvgan");
  const BigVganVocoder voc = BigVganVocoder::load(path);
  EXPECT_EQ(m.input_spec().shape, (std::vector<int64_t>{-1, voc.num_mels(), -1}));
  EXPECT_EQ(m.input_spec().layout(), "(B, " + std::to_string(voc.num_mels()) + ", T)");
  EXPECT_EQ(m.output_spec().sample_rate, voc.sample_rate());
  const Tensor mel = test::random_normal({2, voc.num_mels(), 9}, 405, 0.5f);
  const Tensor got = m.run(mel, one_device());
  EXPECT_TRUE(same_bytes(got, voc.vocode(mel, one_device())));
  EXPECT_EQ(got.dim(2), m.output_samples(9));
}

TEST(AudioModel, MiniMaxH3FolderDecodesAndEncodesAsItsTypedVae) {
  const std::string dir = test::fixture_path("minimax_h3_tiny");
  const AudioModel m = AudioModel::load(dir);
  EXPECT_EQ(m.model(), "minimax-h3-audio-vae");
  EXPECT_TRUE(m.has_encoder());
  EXPECT_EQ(m.output_spec().sample_rate, 32000);
  const MiniMaxH3AudioVae vae = MiniMaxH3AudioVae::load(dir);
  const Tensor z = test::random_normal({2, vae.latent_channels(), 5}, 406, 0.7f);
  const Tensor wave = m.run(z, one_device());
  EXPECT_TRUE(same_bytes(wave, vae.decode(z, one_device())));
  EXPECT_EQ(wave.dim(2), m.output_samples(5));
  EXPECT_TRUE(same_bytes(m.encode(wave, one_device()), vae.encode(wave, nullptr, one_device())));
  EXPECT_EQ(AudioModel::identify(dir), "minimax-h3-audio-vae");
}

// The decoder's stream through the registry: the typed decode_stream's samples for the same cuts,
// equal to one shot; the batch is fixed until flush; the stream outlives the model it came from.
TEST(AudioModel, MiniMaxH3StreamsAsItsTypedDecodeStream) {
  const std::string dir = test::fixture_path("minimax_h3_tiny");
  AudioModelOptions dec_only;
  dec_only.decoder_only = true;
  std::optional<AudioModel> m = AudioModel::load(dir, dec_only);
  ASSERT_TRUE(m->can_stream());
  EXPECT_FALSE(m->has_encoder());
  const MiniMaxH3AudioVae vae = MiniMaxH3AudioVae::load(dir);
  const Tensor z = test::random_normal({2, vae.latent_channels(), 9}, 408, 0.7f);
  const Tensor one = vae.decode(z, one_device());
  StreamOptions so;
  so.threads = 1;
  AudioStream s = m->stream(so);
  MiniMaxH3AudioVae::DecodeStream typed = vae.decode_stream(one_device());
  EXPECT_EQ(s.lookahead_frames(), typed.lookahead_frames());
  EXPECT_EQ(s.samples_per_frame(), vae.hop_length());
  m.reset();  // the stream keeps what it needs
  std::vector<Tensor> got, want;
  for (const auto& [at, n] : {std::pair<int64_t, int64_t>{0, 2}, {2, 1}, {3, 6}}) {
    got.push_back(s.push(z.narrow(2, at, n).clone()));
    want.push_back(typed.push(z.narrow(2, at, n).clone()));
    EXPECT_TRUE(same_bytes(got.back(), want.back()));
  }
  EXPECT_THROW(s.push(test::random_normal({1, vae.latent_channels(), 2}, 409)), ShapeError);
  got.push_back(s.flush());
  want.push_back(typed.flush());
  EXPECT_TRUE(same_bytes(got.back(), want.back()));
  EXPECT_TRUE(test::close_rel_l2(concat(got, 2), one, 1e-6, "registry stream vs decode"));
  // After the flush a new input may have another batch.
  EXPECT_EQ(s.push(test::random_normal({1, vae.latent_channels(), 3}, 410)).dim(0), 1);
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
TEST(AudioModel, EncoderCallsEqualTheTypedVae) {
  const std::string dir = test::fixture_path("minimax_h3_tiny");
  AudioModelOptions enc_only;
  enc_only.encoder_only = true;
  const AudioModel m = AudioModel::load(dir, enc_only);
  EXPECT_THROW(m.run(test::random_normal({1, 8, 3}, 1), one_device()), InvalidArgument);
  const MiniMaxH3AudioVae vae = MiniMaxH3AudioVae::load(dir);
  const Tensor wave = test::random_uniform({2, 1, 1234}, 407, -0.5f, 0.5f);
  Tensor ls, ls_typed;
  const Tensor z = m.encode(wave, one_device(), &ls);
  EXPECT_TRUE(same_bytes(z, vae.encode(wave, &ls_typed, one_device())));
  EXPECT_TRUE(same_bytes(ls, ls_typed));
  ASSERT_TRUE(m.has_latent_statistics());
  EXPECT_TRUE(same_bytes(m.normalize_latents(z), vae.normalize(z)));
  EXPECT_TRUE(same_bytes(m.denormalize_latents(z), vae.denormalize(z)));
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
