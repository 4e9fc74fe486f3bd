// MiniMax-H3 audio VAE against the PyTorch reference (tools/minimax_h3, fixture minimax_h3_tiny:
// hop 40, every kind of stage; gen_minimax_h3.py) and the edge rules: lengths that are not whole
// hops, no normalisation inside decode, the clamp, batch items never mixing, streaming == one shot,
// every key problem reported at once; the released rates (hop 800) at thin widths for the shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "io/json.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/state_dict.h"
#include "models/minimax_h3/attention.h"
#include "models/minimax_h3/model.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/scratch_dir.h"
#include "support/stream_test_util.h"

namespace meshnn::models::minimax_h3 {
namespace {

const std::string kFolder = "minimax_h3_tiny";
const std::string kIo = "minimax_h3_tiny_io.safetensors";

std::string folder_path() { return test::fixture_path(kFolder); }

// A folder in the temp directory, removed at the end of the test.
std::map<std::string, Tensor> fixture_state() {
  auto file = io::SafetensorsFile::open(folder_path() + "/" + kWeightsFile);
  std::map<std::string, Tensor> s;
  for (const std::string& k : file.keys()) s.emplace(k, file.get(k).to(DType::f32));
  return s;
}

Config fixture_config() {
  return parse_config(io::read_config_json_file(folder_path() + "/" + kConfigFile), "fixture");
}

Tensor io_tensor(const std::string& key) {
  static const std::map<std::string, Tensor> io = test::load_fixture(kIo);
  return io.at(key).to(DType::f32);
}

// Writes a folder with `state` and the fixture's config.
void write_folder(const std::filesystem::path& dir, const std::map<std::string, Tensor>& state) {
  std::filesystem::copy_file(folder_path() + "/" + kConfigFile, dir / kConfigFile);
  io::save_safetensors((dir / kWeightsFile).string(), state, {{"format", "pt"}});
}

Model& fixture_model() {
  static std::unique_ptr<Model> m = Model::load(folder_path(), Precision::fp32);
  return *m;
}

TEST(MiniMaxH3, ConfigOfTheFolder) {
  EXPECT_TRUE(is_minimax_h3_folder(folder_path()));
  EXPECT_FALSE(is_minimax_h3_folder(test::fixture_path("")));
  const Config c = fixture_config();
  EXPECT_EQ(c.hop(), 40);
  EXPECT_EQ(c.latent_channels, 8);
  EXPECT_EQ(c.latents_mean.size(), 8u);
  nlohmann::json j = io::read_config_json_file(folder_path() + "/" + kConfigFile);
  j["decoder_rates"] = {5, 2, 2};  // hop 20 ≠ 40
  EXPECT_THROW(parse_config(j, "t"), InvalidArgument);
  j = io::read_config_json_file(folder_path() + "/" + kConfigFile);
  j["use_causal_conv"] = true;
  EXPECT_THROW(parse_config(j, "t"), InvalidArgument);
  j["_class_name"] = "AutoencoderKL";
  EXPECT_FALSE(is_minimax_h3_config(j));
}

TEST(MiniMaxH3, DecodeMatchesPyTorch) {
  const Tensor z = io_tensor("decode.latents");
  const Tensor y = fixture_model().decode(z);
  const Tensor ref = io_tensor("decode.output");
  ASSERT_EQ(y.shape(), (Shape{2, 1, 12 * 40}));
  EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-5, "decode"));
  EXPECT_GT(test::compare(y, ref).psnr_db, 100.0);
}

TEST(MiniMaxH3, EncodeMatchesPyTorchOnAPartialHop) {
  const Tensor wave = io_tensor("encode.wave");  // 413 samples: 10 hops + 13
  ASSERT_EQ(wave.dim(2), 413);
  const Model::Posterior p = fixture_model().encode(wave);
  ASSERT_EQ(p.mean.shape(), (Shape{2, 8, 11}));  // ⌈413 / 40⌉
  EXPECT_TRUE(test::close_rel_l2(p.mean, io_tensor("encode.mean"), 1e-5, "mean"));
  EXPECT_TRUE(test::close_rel_l2(p.logs, io_tensor("encode.logs"), 1e-5, "log std"));
}

TEST(MiniMaxH3, AttentionProjectionMatchesPyTorch) {
  const auto state = fixture_state();
  std::map<std::string, Tensor> pre;
  for (const auto& [k, v] : state)
    if (k.rfind("pre_block.", 0) == 0) pre.emplace(k.substr(10), v);
  CausalAttentionProjection attn(pre, 32, 2, 8, Precision::fp32);
  const Tensor h = io_tensor("attn.input");  // (2, 9, 32)
  const Tensor ref = io_tensor("attn.output");
  EXPECT_TRUE(test::close_rel_l2(graph::run_stream(attn, h, 9), ref, 1e-5, "one push"));
  // Causal with a K/V cache: rows pushed one or a few at a time give the same rows.
  EXPECT_TRUE(test::close_rel_l2(graph::run_stream(attn, h, 1), ref, 1e-5, "row by row"));
  EXPECT_TRUE(test::close_rel_l2(graph::run_stream(attn, h, 4), ref, 1e-5, "by 4"));
  // A later row never changes an earlier one.
  Tensor h2 = h.clone();
  h2.data<float>()[(0 * 9 + 8) * 32 + 3] += 1.f;  // item 0, last row
  const Tensor y2 = graph::run_stream(attn, h2, 9);
  EXPECT_TRUE(test::bit_equal(y2.narrow(1, 0, 8).clone(),
                              graph::run_stream(attn, h, 9).narrow(1, 0, 8).clone(), "causal"));
}

TEST(MiniMaxH3, ClampOnALoudDecoder) {
  auto state = fixture_state();
  const float scale = io_tensor("loud.scale").data<float>()[0];
  Tensor& g = state.at("decoder.conv_post.weight_g");
  g = g.clone();
  for (int64_t i = 0; i < g.numel(); ++i) g.data<float>()[i] *= scale;
  Model m(fixture_config(), state, Precision::fp32, Parts::decoder);
  const Tensor y = m.decode(io_tensor("decode.latents"));
  const Tensor ref = io_tensor("decode.loud_output");
  EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-5, "loud decode"));
  int64_t clipped = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float v = y.data<float>()[i];
    ASSERT_LE(std::fabs(v), 1.f);
    clipped += std::fabs(v) == 1.f;
  }
  EXPECT_GT(clipped, y.numel() / 5);
}

TEST(MiniMaxH3, NoNormalisationInsideDecode) {
  Model& m = fixture_model();
  const Tensor z = io_tensor("decode.latents");
  const Tensor ref = io_tensor("decode.output");
  // Decoding the denormalised latents is a different signal: decode applies no statistics itself.
  const Tensor zd = m.denormalize(z);
  EXPECT_LT(test::compare(m.decode(zd), ref).psnr_db, 60.0);
  EXPECT_TRUE(test::close_rel_l2(m.normalize(zd), z, 1e-6, "normalize ∘ denormalize"));
  const Config c = fixture_config();
  EXPECT_NEAR(zd.data<float>()[0], z.data<float>()[0] * c.latents_std[0] + c.latents_mean[0], 1e-6);
}

TEST(MiniMaxH3, EncodeEqualsEncodingTheZeroPaddedWave) {
  Model& m = fixture_model();
  for (int64_t L : {1, 39, 40, 41, 97}) {
    const Tensor w = test::random_uniform({2, 1, L}, 100 + L, -0.5f, 0.5f);
    const int64_t T = (L + 39) / 40;
    Tensor padded({2, 1, T * 40});
    for (int64_t b = 0; b < 2; ++b)
      std::copy(w.data<float>() + b * L, w.data<float>() + (b + 1) * L,
                padded.data<float>() + b * T * 40);
    const Model::Posterior a = m.encode(w), p = m.encode(padded);
    ASSERT_EQ(a.mean.shape(), (Shape{2, 8, T})) << "L = " << L;
    EXPECT_TRUE(test::bit_equal(a.mean, p.mean, "mean L = " + std::to_string(L)));
    EXPECT_TRUE(test::bit_equal(a.logs, p.logs, "logs L = " + std::to_string(L)));
  }
  EXPECT_THROW(m.encode(Tensor({1, 1, 0})), ShapeError);
  EXPECT_THROW(m.encode(Tensor({1, 2, 80})), ShapeError);
  EXPECT_THROW(m.decode(Tensor({1, 8, 0})), ShapeError);
  EXPECT_THROW(m.decode(Tensor({1, 7, 3})), ShapeError);
}

TEST(MiniMaxH3, BatchItemsNeverMix) {
  Model& m = fixture_model();
  const Tensor z = test::random_normal({2, 8, 7}, 7);
  const Tensor y = m.decode(z);
  const Tensor w = test::random_uniform({2, 1, 333}, 8, -0.5f, 0.5f);
  const Model::Posterior p = m.encode(w);
  for (int64_t b = 0; b < 2; ++b) {
    const Tensor yb = m.decode(z.narrow(0, b, 1).clone());
    EXPECT_TRUE(test::close_rel_l2(yb, y.narrow(0, b, 1).clone(), 1e-6, "decode item"));
    const Model::Posterior pb = m.encode(w.narrow(0, b, 1).clone());
    EXPECT_TRUE(test::close_rel_l2(pb.mean, p.mean.narrow(0, b, 1).clone(), 1e-6, "encode item"));
  }
  // Changing item 1 leaves item 0 exactly as it was.
  Tensor z2 = z.clone();
  for (int64_t i = z.numel() / 2; i < z.numel(); ++i) z2.data<float>()[i] *= -2.f;
  EXPECT_TRUE(test::bit_equal(m.decode(z2).narrow(0, 0, 1).clone(), y.narrow(0, 0, 1).clone(),
                              "decode item 0"));
  Tensor w2 = w.clone();
  for (int64_t i = w.numel() / 2; i < w.numel(); ++i) w2.data<float>()[i] = 0.3f;
  EXPECT_TRUE(test::bit_equal(m.encode(w2).mean.narrow(0, 0, 1).clone(),
                              p.mean.narrow(0, 0, 1).clone(), "encode item 0"));
}

TEST(MiniMaxH3, StreamingEqualsOneShot) {
  Model& m = fixture_model();
  const Tensor z = test::random_normal({2, 8, 13}, 11);
  const Tensor y = m.decode(z);
  auto dec = m.decode_stream();
  Tensor rows = Tensor::empty({2, 13, 8});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 8; ++c)
      for (int64_t t = 0; t < 13; ++t)
        rows.data<float>()[(b * 13 + t) * 8 + c] = z.data<float>()[(b * 8 + c) * 13 + t];
  for (int64_t chunk : {1, 3, 5}) {
    const Tensor s = graph::run_stream(*dec, rows, chunk);
    EXPECT_TRUE(test::close_rel_l2(s.reshape(y.shape()), y, 1e-6, "decode chunk"));
  }
  // The latency model: after n latents, the samples final before flush lag by a fixed look-ahead.
  const int64_t ahead = 100 - dec->final_rows(100) / 40;
  EXPECT_GT(ahead, 0);
  EXPECT_EQ(200 - dec->final_rows(200) / 40, ahead);
  const Tensor w = test::random_uniform({2, 1, 517}, 12, -0.5f, 0.5f);
  const Model::Posterior p = m.encode(w);
  auto enc = m.encode_stream();
  for (int64_t chunk : {1, 37, 160}) {
    const Tensor s = graph::run_stream(*enc, w.reshape({2, 517, 1}), chunk);  // (2, T, 16)
    ASSERT_EQ(s.shape(), (Shape{2, 13, 16}));
    Tensor mean = Tensor::empty({2, 8, 13});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t c = 0; c < 8; ++c)
        for (int64_t t = 0; t < 13; ++t)
          mean.data<float>()[(b * 8 + c) * 13 + t] = s.data<float>()[(b * 13 + t) * 16 + c];
    EXPECT_TRUE(test::close_rel_l2(mean, p.mean, 1e-6, "encode chunk " + std::to_string(chunk)));
  }
}

TEST(MiniMaxH3, FoldedAndOtherDtypesLoad) {
  const test::ScratchDir dir;
  const Tensor z = io_tensor("decode.latents");
  const Tensor ref = io_tensor("decode.output");
  // Folded weights in f32.
  auto state = fixture_state();
  std::map<std::string, Tensor> folded;
  for (const auto& [k, v] : state) {
    const std::string g = ".weight_g";
    if (k.size() > g.size() && k.compare(k.size() - g.size(), g.size(), g) == 0) {
      const std::string p = k.substr(0, k.size() - g.size());
      folded[p + ".weight"] = fold_weight_norm(v, state.at(p + ".weight_v"), p);
    } else if (k.find(".weight_v") == std::string::npos) {
      folded[k] = v;
    }
  }
  write_folder(dir.dir, folded);
  auto m = Model::load(dir.dir.string(), Precision::fp32);
  EXPECT_TRUE(test::close_rel_l2(m->decode(z), ref, 1e-5, "folded f32"));
  EXPECT_TRUE(test::close_rel_l2(m->encode(io_tensor("encode.wave")).mean, io_tensor("encode.mean"),
                                 1e-5, "folded f32 encode"));
  // Unfolded in f16 (bf16 values round to f16): loads and stays close.
  std::filesystem::remove_all(dir.dir);
  std::filesystem::create_directories(dir.dir);
  std::map<std::string, Tensor> half;
  for (const auto& [k, v] : state) {
    Tensor h(v.shape(), DType::f16);
    auto* d = static_cast<_Float16*>(h.raw());
    for (int64_t i = 0; i < v.numel(); ++i) d[i] = static_cast<_Float16>(v.data<float>()[i]);
    half[k] = h;
  }
  write_folder(dir.dir, half);
  m = Model::load(dir.dir.string(), Precision::fp32, Parts::decoder);
  EXPECT_TRUE(test::close_rel_l2(m->decode(z), ref, 1e-2, "f16"));
  EXPECT_THROW(m->encode(io_tensor("encode.wave")), Error);  // not loaded
}

TEST(MiniMaxH3, EveryKeyProblemReportedAtOnce) {
  const test::ScratchDir dir;
  auto state = fixture_state();
  state.erase("encoder.block.2.block.1.block.3.bias");
  state.erase("decoder.ups.1.0.weight_g");                    // a weight-norm half alone
  state.erase("pre_block.attn.zero_k_bias");                  // the buffer is a key too
  state["pre_block.proj.bias"] = Tensor({9});                 // wrong shape
  state["decoder.resblocks.99.convs1.0.bias"] = Tensor({4});  // unknown
  state["mean_proj.weight"] = state.at("mean_proj.weight").to(DType::f64);
  write_folder(dir.dir, state);
  try {
    Model::load(dir.dir.string(), Precision::fp32);
    FAIL() << "expected WeightError";
  } catch (const WeightError& e) {
    const std::string msg = e.what();
    for (const char* k : {"encoder.block.2.block.1.block.3.bias", "decoder.ups.1.0.weight_v",
                          "pre_block.attn.zero_k_bias", "pre_block.proj.bias",
                          "decoder.resblocks.99.convs1.0.bias", "mean_proj.weight"})
      EXPECT_NE(msg.find(k), std::string::npos) << k << " not in: " << msg;
    EXPECT_NE(msg.find("6 checkpoint key problem"), std::string::npos) << msg;
  }
}

// The released rates and kernels (hop 800, 7 upsamplers, strides 2/4/4/5/5) at thin widths, random
// weights: the lengths of both directions.
TEST(MiniMaxH3, ReleasedRatesLengths) {
  Config c;  // released structure
  c.encoder_dim = 2;
  c.latent_dim = 64;
  c.latent_channels = 8;
  c.num_attention_heads = 2;
  c.decoder_dim = 128;
  c.validate("thin");
  const auto filters = fixture_state();
  const Tensor taps = filters.at("decoder.activation_post.upsample.filter");
  std::map<std::string, Tensor> state;
  uint64_t seed = 1;
  for (const auto& [k, s] : expected_tensors(c)) {
    if (k.find(".filter") != std::string::npos) {
      state[k] = taps;
    } else if (k.find("alpha") != std::string::npos && s.size() == 3) {
      state[k] = test::random_uniform(s, seed++, 0.5f, 1.5f);  // Snake1d α, linear
    } else if (k.find("norm") != std::string::npos && k.find(".weight") != std::string::npos) {
      state[k] = test::random_uniform(s, seed++, 0.9f, 1.1f);
    } else if (k.find("zero_k_bias") != std::string::npos) {
      state[k] = Tensor(s);
    } else {
      int64_t fan = 1;
      for (size_t d = 1; d < s.size(); ++d) fan *= s[d];
      state[k] = test::random_normal(s, seed++, s.size() == 1 ? 0.02f : 0.5f / std::sqrt(fan));
    }
  }
  Model m(c, state, Precision::fp32);
  // Frames per device of a time split: the first stage's k11 d5 blocks (25 rows at 5 per frame);
  // the last encoder stage's k7 d9 units (27 rows at 5 per frame).
  EXPECT_EQ(m.min_decode_frames_per_device(), 5);
  EXPECT_EQ(m.min_encode_frames_per_device(), 6);
  const Tensor y = m.decode(test::random_normal({2, 8, 3}, 5));
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2400}));
  // Look-ahead from the graph: decode ±29 latents (the exact receptive field), encode ~9925
  // samples (11.4 latents of convs past the latent's own hop).
  auto dec = m.decode_stream();
  const int64_t ahead = 100 - dec->final_rows(100) / 800;
  EXPECT_GE(ahead, 29);
  EXPECT_LE(ahead, 31);
  // Latent t reads samples up to 800·t + 9924: after n samples, exactly the latents with
  // 800·t + 9924 < n are final.
  auto enc = m.encode_stream();
  for (int64_t n : {160000, 160399, 170123})
    EXPECT_EQ(enc->final_rows(n), (n - 9925) / 800 + 1) << n;
  for (int64_t L : {1, 799, 800, 801, 1700}) {
    const Model::Posterior p = m.encode(test::random_uniform({1, 1, L}, L, -0.5f, 0.5f));
    EXPECT_EQ(p.mean.shape(), (Shape{1, 8, (L + 799) / 800})) << L;
  }
}

}  // namespace
}  // namespace meshnn::models::minimax_h3
