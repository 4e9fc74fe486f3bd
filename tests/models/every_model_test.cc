// Invariants over every entry of the audio-model registry (models::model_specs()): the built-in
// families at the small checkpoints the tests already use, and the toy VAE registered from
// tests/support/toy_model. For each model:
//   (a) a stream over random cuts equals one shot (and an encode stream equals encode);
//   (b) a 1x2 time split equals one device (run, and encode);
//   (c) the run graph's reach is what perturbing one input frame shows;
//   (d) the fewest frames per device is the smallest 1x2 shard that runs equal to one device;
//   (e) a checkpoint with one key missing, one extra and one mis-shaped is refused naming all
//       three;
//   (f) each checkpoint key component is spelled in one source file of the family.
// A registered model without a case below fails ModelCases.EveryRegisteredModelHasACase.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "graph/graph.h"
#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/mesh/mesh.h"
#include "models/bigvgan/model.h"
#include "models/common/audio_description.h"
#include "models/ltx/audio_decoder.h"
#include "models/ltx/weights.h"
#include "models/minimax_h3/model.h"
#include "models/model_spec.h"
#include "support/golden.h"
#include "support/scratch_dir.h"
#include "support/source_scan.h"
#include "support/toy_model/model.h"
#include "support/toy_model/toy_model.h"
#include "support/toy_model/weights.h"

namespace meshnn {
namespace {

namespace fs = std::filesystem;
namespace h3 = models::minimax_h3;
using graph::Node;
using graph::NodePtr;
using graph::Rows;

// A graph of a loaded model (the graph AudioModel::run runs, and an encoder's, over the same
// weights) and how one device of a time line runs it, on the graph's rows.
struct GraphProbe {
  int64_t min_frames = 0;                // what the model reports
  std::function<NodePtr()> make;         // a fresh graph
  std::function<Tensor(int64_t)> input;  // n rows → the graph's input rows (B, n, …)
  // (graph, whole input, ts) → the whole output on every device of the line.
  std::function<Tensor(Node&, const Tensor&, const TimeShard&)> run;
  int64_t rows_per_frame = 1;  // graph input rows per frame of min_frames (an encoder: hop)
  std::string what = "run";
};

struct ModelCase {
  std::string path;     // what AudioModel::load takes (a fixture, or a folder written here)
  std::string weights;  // the safetensors file inside `path` that holds the checkpoint
  std::string extra;    // a key the model would own but no layer reads
  std::string prefix;   // keys of the model's own layers (the edits of (e) pick among them)
  std::function<bool(const std::string&)> ours;    // the checkpoint keys the model reads
  std::vector<std::string> sources;                // the family's folders (repository-relative)
  std::function<std::vector<GraphProbe>()> probe;  // the run graph first
  // A one-frame bump is still visible at the receptive field's edge (see (c)).
  bool probe_is_tight = false;
};

// The graph over its input rows: partition, run, gather (LTX keeps its x2 upsampler's dropped
// rows in a one-device run: cut as decode does).
std::function<Tensor(Node&, const Tensor&, const TimeShard&)> rows_runner() {
  return [](Node& g, const Tensor& rows, const TimeShard& ts) {
    const int64_t T = rows.dim(1), n = g.out_rows(T);
    if (ts.sharded()) return ts.gather(g.run(ts.partition(rows), ts, T), n);
    const Tensor y = g.run(rows);
    return y.dim(1) == n ? y : y.narrow(1, 0, n);
  };
}

// A seeded random toy folder under the temp dir, written once, removed at exit.
std::string toy_folder() {
  struct Folder {
    fs::path dir = fs::temp_directory_path() / ("meshnn_toy_model_" + std::to_string(::getpid()));
    Folder() { test::toy::write_random_folder(dir.string(), test::toy::Config{}, 3535); }
    ~Folder() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const Folder folder;
  return folder.dir.string();
}

std::map<std::string, ModelCase> cases() {
  std::map<std::string, ModelCase> c;
  {
    ModelCase m;
    m.path = m.weights = test::fixture_path("ltx23_small.safetensors");
    m.extra = "audio_vae.decoder.unused_layer.weight";
    m.prefix = "audio_vae.decoder.";
    m.ours = [](const std::string& k) {
      return models::is_ltx_audio_key(k) && !models::is_ltx_encoder_key(k);
    };
    m.sources = {"src/models/ltx", "src/models/common"};
    m.probe = [path = m.path] {
      std::shared_ptr<const models::LtxAudioDecoder> d =
          models::LtxAudioDecoder::load(io::SafetensorsFile::open(path), Precision::fp32);
      return std::vector<GraphProbe>{
          GraphProbe{d->min_frames_per_device(), [d] { return d->graph(); },
                     [](int64_t T) {
                       return test::random_normal({1, T, 16, 8}, 11 + T, 0.8f);
                     },
                     rows_runner()}};
    };
    c["ltx-audio-decoder"] = m;
  }
  {
    ModelCase m;
    m.path = m.weights = test::fixture_path("bigvgan_v2_24k_small.safetensors");
    m.extra = "conv_pre.unused";
    m.prefix = "resblocks.";
    // The generator's keys (the fixture also holds test goldens: input.*, output.*, bigvgan.*).
    m.ours = [](const std::string& k) {
      for (const char* g : {"conv_pre.", "ups.", "resblocks.", "activation_post.", "conv_post."})
        if (k.starts_with(g)) return true;
      return false;
    };
    m.sources = {"src/models/bigvgan", "src/models/common"};
    m.probe = [path = m.path] {
      std::shared_ptr<const models::BigVgan> b =
          models::BigVgan::load(io::SafetensorsFile::open(path), "", Precision::fp32);
      const int64_t mels = b->config().num_mels;
      return std::vector<GraphProbe>{GraphProbe{b->min_frames_per_device(),
                                                [b] { return b->graph(); },
                                                [mels](int64_t T) {
                                                  return test::random_normal({1, T, mels}, 7 + T);
                                                },
                                                rows_runner()}};
    };
    c["nvidia-bigvgan"] = m;
  }
  {
    ModelCase m;
    m.path = test::fixture_path("minimax_h3_tiny");
    m.weights = (fs::path(m.path) / h3::kWeightsFile).string();
    m.extra = "decoder.unused_layer.weight";
    m.prefix = "decoder.";
    m.ours = [](const std::string&) { return true; };
    m.sources = {"src/models/minimax_h3", "src/models/common"};
    m.probe = [path = m.path] {
      std::shared_ptr<const h3::Model> h = h3::Model::load(path, Precision::fp32);
      const int64_t C = h->config().latent_channels;
      const int64_t hop = h->hop();
      return std::vector<GraphProbe>{
          GraphProbe{h->min_decode_frames_per_device(), [h] { return h->decode_stream(); },
                     [C](int64_t T) {
                       return test::random_normal({1, T, C}, 13 + T, 0.5f);
                     },
                     rows_runner()},
          GraphProbe{h->min_encode_frames_per_device(), [h] { return h->encode_stream(); },
                     [](int64_t n) {
                       return test::random_uniform({1, n, 1}, 17 + n, -0.5f, 0.5f);
                     },
                     rows_runner(), hop, "encode"}};
    };
    c["minimax-h3-audio-vae"] = m;
  }
  {
    ModelCase m;
    m.path = toy_folder();
    m.weights = (fs::path(m.path) / test::toy::kWeightsFile).string();
    m.extra = "toy_decoder.unused_layer.weight";
    m.prefix = "toy_";
    m.ours = [](const std::string&) { return true; };
    m.sources = {"tests/support/toy_model"};
    m.probe_is_tight = true;
    m.probe = [path = m.path] {
      std::shared_ptr<const test::toy::Model> t = test::toy::Model::load(path, Precision::fp32);
      const int64_t C = t->config().latent_channels;
      return std::vector<GraphProbe>{
          GraphProbe{t->min_decode_frames(), [t] { return t->decode_graph(); },
                     [C](int64_t T) {
                       return test::random_normal({1, T, C}, 19 + T, 0.5f);
                     },
                     rows_runner()},
          GraphProbe{t->min_encode_frames(), [t] { return t->encode_graph(); },
                     [](int64_t n) {
                       return test::random_uniform({1, n, 1}, 23 + n, -0.5f, 0.5f);
                     },
                     rows_runner(), t->hop(), "encode"}};
    };
    c[test::toy::kRegistryName] = m;
  }
  return c;
}

const ModelCase& case_of(const std::string& name) {
  static const std::map<std::string, ModelCase> all = cases();
  const auto it = all.find(name);
  if (it == all.end()) throw std::logic_error("no test case for registered model " + name);
  return it->second;
}

RunOptions mesh_options(const char* mesh) {
  RunOptions r;
  r.mesh = mesh;
  r.threads = 1;
  return r;
}

// run()'s input of T frames: the input spec with B = 1 and T on its time axis.
Tensor model_input(const AudioModel& m, int64_t T, uint64_t seed) {
  Shape s;
  const AudioIoSpec& in = m.input_spec();
  for (size_t a = 0; a < in.shape.size(); ++a)
    s.push_back(static_cast<int>(a) == in.time_axis ? T : in.shape[a] < 0 ? 1 : in.shape[a]);
  return test::random_normal(s, seed, 0.5f);
}

// Pieces of `x` along `axis` at random cuts (some empty), pushed one after another.
std::vector<Tensor> random_cuts(const Tensor& x, int axis, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<Tensor> out;
  for (int64_t at = 0; at < x.dim(axis);) {
    const int64_t n =
        std::min<int64_t>(x.dim(axis) - at, std::uniform_int_distribution<int>(0, 5)(rng));
    out.push_back(x.narrow(axis, at, n).clone());
    at += n;
  }
  return out;
}

Tensor cat_time(const std::vector<Tensor>& parts, int axis) {
  std::vector<Tensor> some;
  for (const Tensor& p : parts)
    if (p.defined() && p.dim(axis) > 0) some.push_back(p);
  return concat(some, axis);
}

// Runs `p` on a 1 × parts time line → device 0's whole output (a device's throw is rethrown).
Tensor on_line(const GraphProbe& p, const Tensor& x, int parts) {
  std::vector<NodePtr> graphs;
  for (int i = 0; i < parts; ++i) graphs.push_back(p.make());
  if (parts == 1) return p.run(*graphs[0], x, TimeShard());
  MeshConfig mc;
  mc.cols = parts;
  mc.threads_per_device = 1;
  mc.timeout_seconds = 120;
  Tensor out;
  std::mutex mu;
  run_spmd(mc, [&](Device& d) {
    Tensor y = p.run(*graphs[static_cast<size_t>(d.rank())], x, TimeShard(d, {1}));
    if (d.rank() != 0) return;
    std::lock_guard<std::mutex> lock(mu);
    out = y;
  });
  return out;
}

// The first and last index along `axis` where a and b (same shape, f32) differ at all; {-1, -1}
// if nowhere.
std::pair<int64_t, int64_t> changed_rows(const Tensor& a, const Tensor& b, int axis) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= a.dim(d);
  for (int d = axis + 1; d < a.rank(); ++d) inner *= a.dim(d);
  const int64_t n = a.dim(axis);
  const Tensor ac = a.clone(), bc = b.clone();  // contiguous
  const float *pa = ac.data<float>(), *pb = bc.data<float>();
  int64_t first = -1, last = -1;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < inner; ++i) {
        if (pa[(o * n + r) * inner + i] == pb[(o * n + r) * inner + i]) continue;
        first = first < 0 ? r : std::min(first, r);
        last = std::max(last, r);
      }
  return {first, last};
}

// A folder under the temp dir for one test, removed when it ends.
class EveryModel : public ::testing::TestWithParam<std::string> {
 protected:
  const ModelCase& c() const { return case_of(GetParam()); }
};

TEST(ModelCases, EveryRegisteredModelHasACase) {
  EXPECT_GE(models::model_specs().size(), 4u);  // three built-in families and the toy
  for (const models::ModelSpec& s : models::model_specs())
    EXPECT_NO_THROW(case_of(s.name)) << s.name;
}

// (a) Stream on random cuts = one shot; an encoder's stream = encode.
TEST_P(EveryModel, StreamEqualsOneShotOnRandomCuts) {
  const AudioModel m = AudioModel::load(c().path);
  ASSERT_EQ(m.model(), GetParam());
  ASSERT_TRUE(m.can_stream());
  const Tensor x = model_input(m, 13, 101);
  const Tensor ref = m.run(x, mesh_options("1x1"));
  for (uint64_t seed : {1, 2}) {
    AudioStream s = m.stream();
    std::vector<Tensor> got;
    for (const Tensor& piece : random_cuts(x, m.input_spec().time_axis, seed))
      got.push_back(s.push(piece));
    got.push_back(s.flush());
    // 1e-5: the per-model stream tests' bound (the LTX decoder's measured rel L2 is ~1e-6).
    EXPECT_TRUE(test::close_rel_l2(cat_time(got, 2), ref, 1e-5, "stream vs run"));
  }
  if (!m.has_encoder()) return;
  const int64_t hop = m.output_samples(1);
  const Tensor wave = test::random_uniform({1, 1, 11 * hop - hop / 3}, 102, -0.5f, 0.5f);
  Tensor ref_logs;
  const Tensor ref_mean = m.encode(wave, mesh_options("1x1"), &ref_logs);
  AudioEncodeStream es = m.encode_stream(mesh_options("1x1"));
  std::vector<Tensor> mean, logs;
  for (const Tensor& piece : random_cuts(wave, 2, 3)) {
    Tensor l;
    mean.push_back(es.push(piece, &l));
    logs.push_back(l);
  }
  Tensor l;
  mean.push_back(es.flush(&l));
  logs.push_back(l);
  EXPECT_TRUE(test::close_rel_l2(cat_time(mean, 2), ref_mean, 1e-5, "encode stream mean"));
  EXPECT_TRUE(test::close_rel_l2(cat_time(logs, 2), ref_logs, 1e-5, "encode stream logs"));
}

// (b) Mesh 1x2 (time split over two devices) = one device, run and encode.
TEST_P(EveryModel, MeshOneByTwoEqualsOneDevice) {
  const AudioModel m = AudioModel::load(c().path);
  const Tensor x = model_input(m, 16, 201);
  const Tensor one = m.run(x, mesh_options("1x1")), two = m.run(x, mesh_options("1x2"));
  // Not bit-identical: the sharded convs run on padded copies (GraphMinShardRows measured
  // ≤ 1.2e-6).
  EXPECT_TRUE(test::close_rel_l2(two, one, 2e-6, "run 1x2 vs 1x1"));
  if (!m.has_encoder()) return;
  const int64_t hop = m.output_samples(1);
  const Tensor wave = test::random_uniform({1, 1, 24 * hop - hop / 2}, 202, -0.5f, 0.5f);
  EXPECT_TRUE(test::close_rel_l2(m.encode(wave, mesh_options("1x2")),
                                 m.encode(wave, mesh_options("1x1")), 2e-6, "encode 1x2 vs 1x1"));
}

// Input row t of x (B, T, …) bumped by `value` → (the probed right, the probed left) reach of
// node `n` in its input rows: how far before / after row t the first / last output rows that
// change are aligned. Below rate 1 an output row stands for several input rows, so every phase
// t … t + 1/rate − 1 is bumped and the widest taken.
std::pair<Rows, Rows> probed_reach(Node& n, const Tensor& x, float value) {
  const graph::Reach r = n.reach();
  const Rows per_out(r.rate.den, r.rate.num);  // input rows per output row
  const int64_t T = x.dim(1);
  // Output row o is aligned with input (o + d) / rate, d the rows a node drops at the front (the
  // LTX x2 causal upsampler's first row: out_rows is then rate·T − d).
  const int64_t d = std::max<int64_t>(0, (r.rate * Rows(T)).floor() - n.out_rows(T));
  const Tensor a = n.run(x);
  Rows right(-1), left(-1);
  for (int64_t t = T / 2; t < T / 2 + std::max<int64_t>(1, per_out.ceil()); ++t) {
    Tensor row = x.narrow(1, t, 1).clone();
    for (int64_t i = 0; i < row.numel(); ++i) row.data<float>()[i] += value;
    NodePtr other = n.fork();
    const Tensor b = other->run(concat({x.narrow(1, 0, t), row, x.narrow(1, t + 1, T - t - 1)}, 1));
    const auto [first, last] = changed_rows(a, b, 1);
    if (first < 0) continue;
    right = std::max(right, Rows(t) + Rows(-(first + d)) * per_out);
    left = std::max(left, Rows(last + d) * per_out + Rows(-t));
  }
  return {right, left};
}

std::string str(const Rows& r) {
  return std::to_string(r.num) + (r.den == 1 ? "" : "/" + std::to_string(r.den));
}

// (c) The graph's reach is what perturbing one input frame shows: a bump of one frame changes no
// output beyond the reach (bit-compared, so a tap the reach leaves out shows however small its
// weight), and the outputs it changes reach the reach's edges within one input frame.
// The tightness half holds only where a bump's effect at the receptive field's edge stays above
// f32 rounding: through a deep anti-aliased generator (the built-in families) it fades below it
// tens of frames before the structural edge, and a huge bump (or a NaN) leaks through the
// convolutions' fast transforms and padded taps instead; there the probe is a lower bound only.
TEST_P(EveryModel, ReachIsTheProbedContext) {
  for (const GraphProbe& p : c().probe()) {
    SCOPED_TRACE(p.what);
    NodePtr g = p.make();
    const graph::Reach r = g->reach();
    // A causal attention reads its whole past: only the right reach is probed.
    const bool whole_past = r.left.ceil() >= graph::kWholePast;
    const int64_t rows = 2 * ((whole_past ? 0 : r.left.ceil()) + r.right.ceil()) + 9;
    const int64_t T = graph::Rows(rows, p.rows_per_frame).ceil() * p.rows_per_frame;
    const auto [right, left] = probed_reach(*g, p.input(T), 0.25f);
    std::printf("%s %s: reach left %s right %s; a bump reaches left %s right %s\n",
                GetParam().c_str(), p.what.c_str(), whole_past ? "whole past" : str(r.left).c_str(),
                str(r.right).c_str(), str(left).c_str(), str(right).c_str());
    ASSERT_FALSE(right < Rows(0)) << "no output changed";
    EXPECT_FALSE(r.right < right) << "an output reads further ahead than the reach says";
    EXPECT_FALSE(r.left < left) << "an output reads further back than the reach says";
    if (!c().probe_is_tight) continue;
    EXPECT_TRUE(r.right < right + Rows(1)) << "the reach overstates the look-ahead by ≥ 1 frame";
    if (!whole_past) {
      EXPECT_TRUE(r.left < left + Rows(1)) << "the reach overstates the context by ≥ 1 frame";
    }
  }
}

// (d) The fewest frames per device is the smallest 1x2 shard that runs equal to one device (an
// encoder's shards are whole hops of samples).
TEST_P(EveryModel, MinFramesPerDeviceIsTheSmallestShardThatRuns) {
  for (const GraphProbe& p : c().probe()) {
    SCOPED_TRACE(p.what);
    EXPECT_EQ(p.min_frames, Rows(p.make()->min_shard_rows(), p.rows_per_frame).ceil());
    int64_t probed = 0;
    for (int64_t S = 1; S <= p.min_frames + 1 && probed == 0; ++S) {
      const Tensor x = p.input(2 * S * p.rows_per_frame);
      try {
        const Tensor two = on_line(p, x, 2), one = on_line(p, x, 1);
        if (two.shape() == one.shape() && test::compare(two, one).rel_l2 <= 2e-6) probed = S;
      } catch (const ShapeError&) {
        // A halo longer than the neighbour's shard: too few frames.
      }
    }
    EXPECT_EQ(probed, p.min_frames);
  }
}

// (e) One key missing, one extra and one mis-shaped: refused naming all three.
TEST_P(EveryModel, ABrokenCheckpointIsRefusedNamingEveryProblem) {
  const ModelCase& mc = c();
  const test::ScratchDir scratch;
  const fs::path& dir = scratch.dir;
  const bool folder = fs::is_directory(mc.path);
  const fs::path copy = dir / fs::path(mc.path).filename();
  if (folder) fs::copy(mc.path, copy, fs::copy_options::recursive);
  const fs::path weights = folder ? copy / fs::path(mc.weights).filename() : copy;
  const io::SafetensorsFile file = io::SafetensorsFile::open(mc.weights);
  std::map<std::string, Tensor> state;
  std::vector<std::string> biases;
  for (const std::string& k : file.keys()) {
    state.emplace(k, file.get(k).clone());
    if (k.starts_with(mc.prefix) && k.ends_with(".bias") && mc.ours(k)) biases.push_back(k);
  }
  ASSERT_GE(biases.size(), 2u);
  const std::string missing = biases.front(), reshaped = biases.back();
  state.erase(missing);
  Shape s = state.at(reshaped).shape();
  s[0] += 1;
  state[reshaped] = test::random_normal(s, 5).to(state.at(reshaped).dtype());
  state[mc.extra] = test::random_normal({4}, 6);
  io::save_safetensors(weights.string(), state, file.metadata());
  try {
    AudioModel::load(copy.string());
    ADD_FAILURE() << "a broken checkpoint loaded";
  } catch (const WeightError& e) {
    const std::string msg = e.what();
    for (const std::string& k : {missing, reshaped, mc.extra})
      EXPECT_NE(msg.find(k), std::string::npos) << "does not name " << k << ": " << msg;
  }
}

// String literals of a file's code (comments blanked), split at '.'.
std::set<std::string> literal_parts(const fs::path& file) {
  const std::string text = test::code_without_comments(file);
  std::set<std::string> out;
  for (size_t b = text.find('"'); b != std::string::npos; b = text.find('"', b)) {
    const size_t end = text.find_first_of("\"\n", b + 1);
    if (end == std::string::npos) break;
    const std::string literal = text.substr(b + 1, end - b - 1);
    b = end + 1;
    if (text[end] == '\n' || literal.find(' ') != std::string::npos) continue;
    std::stringstream ss(literal);
    for (std::string p; std::getline(ss, p, '.');) out.insert(p);
  }
  return out;
}

// (f) Each component of the model's checkpoint keys (numbers aside) is spelled in at most one
// source file of its family (its folder, and src/models/common for the built-ins, whose shared
// description spells the generator's keys). The layers' own tensor names (weight, bias,
// act.alpha, upsample.filter, the weight-norm halves) are the layers' (src/layers), a separate
// namespace; the config readers (audio_config.*) spell section names (audio_vae, vocoder) that
// are also key prefixes. A part spelled in no family file is built from pieces ("w" + j).
TEST_P(EveryModel, EachKeyComponentIsSpelledInOneFileOfItsFamily) {
  const ModelCase& mc = c();
  const io::SafetensorsFile file = io::SafetensorsFile::open(mc.weights);
  std::set<std::string> parts;
  for (const std::string& k : file.keys()) {
    if (!mc.ours(k)) continue;
    std::stringstream ss(k);
    for (std::string p; std::getline(ss, p, '.');)
      if (!p.empty() && !std::isdigit(static_cast<unsigned char>(p[0]))) parts.insert(p);
  }
  ASSERT_FALSE(parts.empty());
  const fs::path root = MESHNN_SOURCE_DIR;
  std::map<std::string, std::vector<std::string>> spelled_in;
  int files = 0;
  for (const std::string& d : mc.sources)
    for (const fs::path& f : test::source_files(root, {d.c_str()})) {
      if (f.filename().string().starts_with("audio_config.")) continue;
      ++files;
      for (const std::string& p : literal_parts(f))
        if (parts.count(p)) spelled_in[p].push_back(fs::relative(f, root).string());
    }
  ASSERT_GE(files, 3);
  for (const std::string& p : parts) {
    const std::vector<std::string>& in = spelled_in[p];
    std::string list;
    for (const std::string& f : in) list += f + " ";
    EXPECT_LE(in.size(), 1u) << "key part '" << p << "' is spelled in " << in.size()
                             << " files: " << list;
  }
}

std::vector<std::string> registered_names() {
  std::vector<std::string> out;
  for (const models::ModelSpec& s : models::model_specs()) out.push_back(s.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryModel, ::testing::ValuesIn(registered_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace meshnn
