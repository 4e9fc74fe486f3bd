// Issue 23 ("Reliability, second round"): library-level regressions, one block per item (the CLI
// and Python items are in tests/cli/reliability_cli_test.cc and tests/python/test_reliability.py;
// docs/reliability.md maps every item to its test).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "io/file_util.h"
#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/core/input_checks.h"
#include "meshnn/gr00t_config.h"
#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/io/stream_io.h"
#include "meshnn/io/wav.h"
#include "models/common/audio_config.h"
#include "models/common/audio_description.h"
#include "models/gr00t/action_head.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/weights.h"
#include "ops/softmax.h"
#include "support/fixtures.h"

namespace meshnn::test {
namespace {

namespace fs = std::filesystem;
using namespace meshnn::gr00t;

// A fresh temp folder for one test, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "meshnn_rel2_XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- item 4: a huge read size neither wraps nor allocates ---------------------------------------

TEST(Reliability2, RawFrameReadOfHugeCountReadsTheFrames) {
  TempDir d;
  std::mt19937 rng(4);
  std::vector<float> v(3 * 5);
  for (float& x : v) x = std::uniform_real_distribution<float>(-2, 2)(rng) + 0.01f;
  {
    std::ofstream f(d / "raw.f32", std::ios::binary);
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  }
  auto src = io::open_raw_frames(d / "raw.f32", 3);
  Tensor out;
  int64_t got = 0;
  for (int64_t n; (n = src->read(int64_t{1} << 62, out)) > 0;) {
    ASSERT_EQ(out.dim(1), 3);
    for (int64_t i = 0; i < n * 3; ++i) EXPECT_EQ(out.data<float>()[i], v[got * 3 + i]);
    got += n;
  }
  EXPECT_EQ(got, 5);
  EXPECT_THROW(src->read(0, out), InvalidArgument);
}

// ---- item 10: inputs read whole must be regular files; temp files go on SIGTERM -----------------

TEST(Reliability2, FifoGivenAsAWholeFileInputIsRefusedWithoutBlocking) {
  TempDir d;
  const std::string fifo = d / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Each of these used to block in open() forever (no writer comes).
  EXPECT_NE(message_of([&] { io::load_npy(fifo); }).find("FIFO"), std::string::npos);
  EXPECT_NE(message_of([&] { io::SafetensorsFile::open(fifo); }).find("FIFO"), std::string::npos);
  EXPECT_NE(message_of([&] { io::read_wav(fifo); }).find("FIFO"), std::string::npos);
  EXPECT_THROW(io::check_regular_input(d.path.string()), InvalidArgument);  // a folder
  io::check_regular_input(d / "missing.npy");  // left to the open that follows
}

TEST(Reliability2, RegisteredTempFileIsRemovedOnSigterm) {
  TempDir d;
  const std::string tmp = d / ".out.wav.meshnn-tmp.1";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    io::remove_temp_files_on_signal();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT, 0600);
    if (fd < 0) _exit(3);
    ::close(fd);
    io::register_temp_file(tmp);
    ::raise(SIGTERM);
    _exit(4);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_FALSE(fs::exists(tmp));
}

// ---- item 13: a PyTorch checkpoint says so and names the converter ------------------------------

TEST(Reliability2, PytorchCheckpointIsNamedAsSuch) {
  TempDir d;
  // torch.save's zip container starts with a local file header; the rest is random.
  std::mt19937 rng(13);
  std::string bytes = "PK\x03\x04";
  for (int i = 0; i < 200; ++i) bytes.push_back(static_cast<char>(rng() & 0xff));
  bytes[8] = 'x';
  std::ofstream(d / "bigvgan_generator.pt", std::ios::binary) << bytes;
  const std::string m = message_of([&] { io::SafetensorsFile::open(d / "bigvgan_generator.pt"); });
  EXPECT_NE(m.find("PyTorch"), std::string::npos) << m;
  EXPECT_NE(m.find("tools/convert_checkpoint.py"), std::string::npos) << m;
}

// ---- item 15: an all-NaN score row stays NaN (it was turned into zeros) -------------------------

TEST(Reliability2, AllNanAttentionRowPropagates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, nan, nan, nan, 0.5f, -1.f, 2.f, 0.25f};
  ops::softmax_row(x.data(), 4);
  ops::softmax_row(x.data() + 4, 4);
  for (int j = 0; j < 4; ++j) EXPECT_TRUE(std::isnan(x[j])) << j;
  double sum = 0;
  for (int j = 4; j < 8; ++j) sum += x[j];
  EXPECT_NEAR(sum, 1.0, 1e-6);
  // A fully masked row is still the zero row.
  std::vector<float> y = {1, 2, 3, 4};
  const std::vector<uint8_t> none = {0, 0, 0, 0};
  ops::softmax_row(y.data(), 4, none.data());
  for (float f : y) EXPECT_EQ(f, 0.f);
}

// Items 11 / 15: a NaN weight in the DiT gives an error naming the step, not finite actions.
TEST(Reliability2, NanWeightInTheHeadIsReportedAsTheModelsFault) {
  io::SafetensorsFile f = open_fixture("gr00t_head_n1_7.safetensors");
  std::map<std::string, Tensor> t;
  for (const std::string& k : f.keys()) t.emplace(k, f.get(k).clone());
  const Config cfg = Config::from_metadata(f.metadata(), Version::n1_7);
  const ActionHeadConfig hc = ActionHeadConfig::from_metadata(f.metadata(), Version::n1_7);
  const SlotLayout layout = SlotLayout::from_token_types(t.at("input.token_types"), cfg.row_block);
  const int emb = std::stoi(f.metadata().at("embodiment"));
  std::string key;
  for (const auto& [k, v] : t)
    if (k.find("transformer_blocks.0.attn1.to_q.weight") != std::string::npos) key = k;
  ASSERT_FALSE(key.empty());
  Tensor w = t.at(key);
  for (int64_t i = 0; i < w.numel(); ++i) w.data<float>()[i] = std::nanf("");
  PolicyRunner pol(cfg, hc, layout, lookup_in(t));
  const std::string m = message_of([&] {
    pol.get_action(t.at("input.features"), t.at("input.state"), emb, t.at("input.noise"));
  });
  EXPECT_NE(m.find("non-finite velocity"), std::string::npos) << m;
  EXPECT_NE(m.find("step 1 of"), std::string::npos) << m;
}

// Item 11: the shared output check names the model and the stage.
TEST(Reliability2, ModelOutputCheckNamesModelAndStage) {
  Tensor y = Tensor::empty({1, 2, 8}, DType::f32);
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = 0.1f * static_cast<float>(i + 1);
  check_model_output(y, "BigVGAN vocoder", "stage 1/1 (neural vocoder)");
  y.data<float>()[11] = std::numeric_limits<float>::infinity();
  const std::string m =
      message_of([&] { check_model_output(y, "BigVGAN vocoder", "stage 1/1 (neural vocoder)"); });
  EXPECT_NE(m.find("BigVGAN vocoder: stage 1/1 (neural vocoder) produced"), std::string::npos) << m;
  EXPECT_NE(m.find("(0, 1, 3)"), std::string::npos) << m;
}

// Item 11, the first stage at fault: a NaN in a weight of the LTX chain's first stage (the
// mel-VAE) is reported as that stage's output, by the one-shot and by the chunked decode, not as
// the output of the last stage it ran into; a NaN in a vocoder weight names the second stage.
TEST(Reliability2, NonFiniteOutputNamesTheFirstStageThatProducedIt) {
  io::SafetensorsFile f = open_fixture("ltx23_small.safetensors");
  const models::LtxAudioConfig cfg = models::parse_ltx_audio_config(
      io::parse_config_json(f.metadata().at("config"), "fixture config"), "fixture");
  std::map<std::string, Tensor> clean;
  for (const std::string& k : f.keys())
    if (models::is_ltx_audio_key(k)) clean.emplace(k, f.get(k).clone());
  const Tensor latent = [] {
    Tensor t = Tensor::empty({1, 8, 6, 16});
    std::mt19937 rng(5);
    std::normal_distribution<float> n;
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = n(rng);
    return t;
  }();
  auto poisoned = [&](const std::string& key) {
    std::map<std::string, Tensor> s = clean;
    Tensor w = s.at(key).to(DType::f32).clone();  // the fixture stores bf16
    w.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
    s[key] = w;
    return models::LtxAudioDecoder(cfg, s, Precision::fp32);
  };
  {
    models::LtxAudioDecoder dec = poisoned("audio_vae.decoder.conv_in.conv.weight");
    const std::string one = message_of([&] { dec.decode(latent); });
    EXPECT_NE(one.find("LTX audio decoder: stage 1/3 (mel-VAE decoder) produced a non-finite"),
              std::string::npos)
        << one;
    const std::string chunked = message_of([&] { dec.decode_chunked(latent, 3); });
    EXPECT_NE(chunked.find("chunk 1/2, stage 1/3 (mel-VAE decoder) produced a non-finite"),
              std::string::npos)
        << chunked;
  }
  {
    models::LtxAudioDecoder dec = poisoned("vocoder.vocoder.conv_pre.weight");
    const std::string one = message_of([&] { dec.decode(latent); });
    EXPECT_NE(one.find("stage 2/3 (neural vocoder) produced a non-finite"), std::string::npos)
        << one;
  }
  // The clean weights decode without the check firing.
  models::LtxAudioDecoder ok(cfg, clean, Precision::fp32);
  const Tensor y = ok.decode(latent);
  EXPECT_EQ(first_non_finite(y.data<float>(), y.numel()), -1);
}

// ---- items 8 / 14: the head config is strict and bounded; fields read where upstream has them ---

TEST(Reliability2, ActionHeadConfigIsStrict) {
  for (const char* bad : {R"({"action_horizon": 16.7})", R"({"action_horizon": true})",
                          R"({"num_inference_timesteps": 4.0})", R"({"max_seq_len": 1e30})",
                          R"({"num_inference_timesteps": 1001, "num_timestep_buckets": 1000})",
                          R"({"action_dim": 99999999999})"})
    EXPECT_THROW(ActionHeadConfig::from_json(bad, Version::n1_7), InvalidArgument) << bad;
  const ActionHeadConfig ok = ActionHeadConfig::from_json(
      R"({"action_horizon": 17, "num_inference_timesteps": 8})", Version::n1_7);
  EXPECT_EQ(ok.action_horizon, 17);
  EXPECT_EQ(ok.num_steps, 8);
}

TEST(Reliability2, StepsBeyondTheTimestepBucketsAreRefused) {
  io::SafetensorsFile f = open_fixture("gr00t_head_n1_7.safetensors");
  std::map<std::string, Tensor> t;
  for (const std::string& k : f.keys()) t.emplace(k, f.get(k));
  const Config cfg = Config::from_metadata(f.metadata(), Version::n1_7);
  const ActionHeadConfig hc = ActionHeadConfig::from_metadata(f.metadata(), Version::n1_7);
  const SlotLayout layout = SlotLayout::from_token_types(t.at("input.token_types"), cfg.row_block);
  const int emb = std::stoi(f.metadata().at("embodiment"));
  PolicyRunner pol(cfg, hc, layout, lookup_in(t));
  const Tensor& feats = t.at("input.features");
  const Tensor& st = t.at("input.state");
  EXPECT_THROW(pol.get_action(feats, st, emb, t.at("input.noise"), 0, hc.num_buckets + 1),
               InvalidArgument);
  EXPECT_THROW(pol.get_action(feats, st, emb, t.at("input.noise"), 0, -1), InvalidArgument);
}

TEST(Reliability2, Gr00tConfigFieldsReadWhereUpstreamHasThem) {
  const std::string base = R"("vl_self_attention_cfg": {"num_layers": 1, "num_attention_heads": 4,
      "attention_head_dim": 16, "ff_inner_dim": 128}, "backbone_embedding_dim": 64,
      "max_state_dim": 20, "hidden_size": 32, "input_embedding_dim": 48,
      "max_num_embodiments": 3)";
  // A reduced-width config without diffusion_model_cfg.cross_attention_dim: the DiT attends to
  // the backbone width (was: refused, "cross_attention_dim=2048, backbone_embedding_dim=64").
  const Config c =
      Config::from_json("{" + base +
                            R"(, "diffusion_model_cfg": {"num_layers": 4, "num_attention_heads": 4,
          "attention_head_dim": 12}})",
                        Version::n1_7);
  EXPECT_EQ(c.dit.cross_attention_dim, 64);
  // attend_text_every_n_blocks at the top level (was: ignored, silently 2).
  const Config c1 = Config::from_json(
      "{" + base +
          R"(, "attend_text_every_n_blocks": 1, "diffusion_model_cfg": {"num_layers": 4,
          "num_attention_heads": 4, "attention_head_dim": 12}})",
      Version::n1_7);
  EXPECT_EQ(c1.dit.attend_text_every_n_blocks, 1);
  EXPECT_NE(c1.dit.attend_text_every_n_blocks, c.dit.attend_text_every_n_blocks);
}

}  // namespace
}  // namespace meshnn::test
