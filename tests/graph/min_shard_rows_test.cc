// The halo rule, written once in src/graph: every sharded layer asks graph::halo_of(reach()) and
// the fewest frames a time split may give a device is the graph's min_shard_rows(). For every
// model graph: the derived minimum is what a probe finds (one frame fewer per device makes a halo
// exchange fail, the minimum runs), and at and just above it a 1x2 and a 1x3 time split equal one
// device to f32 rounding (not bit-identical: the sharded convs run on padded copies). And no second
// copy of the rule remains outside src/graph.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "meshnn/io/safetensors.h"
#include "meshnn/layers/time_shard.h"
#include "meshnn/mesh/mesh.h"
#include "models/bigvgan/model.h"
#include "models/ltx/audio_decoder.h"
#include "models/minimax_h3/model.h"
#include "support/golden.h"

namespace meshnn::graph {
namespace {

namespace h3 = models::minimax_h3;

// ---- the rule on single layers ------------------------------------------------------------------

TEST(GraphHaloRule, HaloOfReach) {
  // A k7 'same' conv: 3 rows each side.
  EXPECT_EQ(halo_of({Rows(3), Rows(3), Rows(1)}).left, 3);
  EXPECT_EQ(halo_of({Rows(3), Rows(3), Rows(1)}).right, 3);
  // A causal k3 conv: 2 rows before, none after.
  EXPECT_EQ(halo_of({Rows(2), Rows(0), Rows(1)}).right, 0);
  // A k16 stride-8 transposed conv cropping 4: ⌈11/8⌉ = 2 before, ⌊(4 + 7)/8⌋ = 1 after.
  EXPECT_EQ(halo_of({Rows(11, 8), Rows(4, 8), Rows(8)}).left, 2);
  EXPECT_EQ(halo_of({Rows(11, 8), Rows(4, 8), Rows(8)}).right, 1);
  // A k10 stride-5 conv padded 3: the last output's window ends k − s − pad = 2 rows past its own
  // stride, so 2 rows after (not the layer's 3 pad rows).
  EXPECT_EQ(halo_of({Rows(3), Rows(6), Rows(1, 5)}).left, 3);
  EXPECT_EQ(halo_of({Rows(3), Rows(6), Rows(1, 5)}).right, 2);
  // A k1 stride-2 conv reads nothing beyond its own row.
  EXPECT_EQ(halo_of({Rows(0), Rows(0), Rows(1, 2)}).right, 0);
}

// ---- every model graph --------------------------------------------------------------------------

// A model's one-shot graph and how to run it on one device of a time line.
struct Subject {
  std::string name;
  int64_t min_frames = 0;                // what the model reports
  std::function<NodePtr()> make;         // a fresh graph (its own plans)
  std::function<Tensor(int64_t)> input;  // T frames → the call's whole input
  // (graph, whole input, ts) → the whole output, the same on every device of the line.
  std::function<Tensor(Node&, const Tensor&, const TimeShard&)> run;
};

// The graph run over its input rows: partition, run, gather.
std::function<Tensor(Node&, const Tensor&, const TimeShard&)> rows_runner() {
  return [](Node& g, const Tensor& rows, const TimeShard& ts) {
    const int64_t T = rows.dim(1), n = g.out_rows(T);
    if (ts.sharded()) return ts.gather(g.run(ts.partition(rows), ts, T), n);
    const Tensor y = g.run(rows);  // the x2 causal upsampler keeps its dropped rows: cut as decode
    return y.dim(1) == n ? y : y.narrow(1, 0, n);
  };
}

// Runs `s` on a 1 × parts time line over T frames → device 0's whole output (any throw of a
// device is rethrown).
Tensor on_line(const Subject& s, const Tensor& x, int parts) {
  std::vector<NodePtr> graphs;
  for (int i = 0; i < parts; ++i) graphs.push_back(s.make());
  if (parts == 1) return s.run(*graphs[0], x, TimeShard());
  MeshConfig mc;
  mc.rows = 1;
  mc.cols = parts;
  mc.threads_per_device = 1;
  mc.timeout_seconds = 120;
  Tensor out;
  std::mutex mu;
  run_spmd(mc, [&](Device& d) {
    Tensor y = s.run(*graphs[static_cast<size_t>(d.rank())], x, TimeShard(d, {1}));
    if (d.rank() == 0) {
      std::lock_guard<std::mutex> lock(mu);
      out = y;
    }
  });
  return out;
}

std::vector<Subject> subjects() {
  std::vector<Subject> out;
  for (const char* f : {"bigvgan_v2_24k_small.safetensors", "bigvgan_base_24k_small.safetensors"}) {
    auto file = io::SafetensorsFile::open(test::fixture_path(f));
    std::shared_ptr<const models::BigVgan> m = models::BigVgan::load(file, "", Precision::fp32);
    const int64_t mels = m->config().num_mels;
    out.push_back({f, m->min_frames_per_device(), [m] { return m->graph(); },
                   [mels](int64_t T) {
                     return test::random_normal({1, T, mels}, 7 + T);
                   },
                   rows_runner()});
  }
  for (const char* f : {"ltx23_small.safetensors", "ltx2_small.safetensors"}) {
    auto file = io::SafetensorsFile::open(test::fixture_path(f));
    std::shared_ptr<const models::LtxAudioDecoder> m =
        models::LtxAudioDecoder::load(file, Precision::fp32);
    out.push_back({f, m->min_frames_per_device(), [m] { return m->graph(); },
                   [](int64_t T) {
                     return test::random_normal({1, T, 16, 8}, 11 + T, 0.8f);
                   },
                   rows_runner()});
  }
  std::shared_ptr<const h3::Model> h =
      h3::Model::load(test::fixture_path("minimax_h3_tiny"), Precision::fp32);
  const int64_t C = h->config().latent_channels, hop = h->hop();
  out.push_back(
      {"minimax_h3 decode", h->min_decode_frames_per_device(), [h] { return h->decode_stream(); },
       [C](int64_t T) {
         return test::random_normal({2, C, T}, 13 + T);
       },
       [h](Node& g, const Tensor& z, const TimeShard& ts) { return h->decode(z, g, ts); }});
  out.push_back({"minimax_h3 encode", h->min_encode_frames_per_device(),
                 [h] { return h->encode_stream(); },
                 // Ragged: the last hop is short (zero-padded by the encode, never cropped).
                 [hop](int64_t T) {
                   return test::random_uniform({2, 1, T * hop - hop / 3}, 17 + T, -0.5f, 0.5f);
                 },
                 [h](Node& g, const Tensor& w, const TimeShard& ts) {
                   const h3::Model::Posterior p = h->encode(w, g, ts);
                   return concat({p.mean, p.logs}, 1);
                 }});
  return out;
}

TEST(GraphMinShardRows, TheDerivedMinimumIsTheSmallestShardThatRuns) {
  for (const Subject& s : subjects()) {
    SCOPED_TRACE(s.name);
    const int64_t m = s.min_frames;
    ASSERT_GE(m, 1);
    std::printf("%-40s min frames per device %lld\n", s.name.c_str(), static_cast<long long>(m));
    // One frame fewer per device: some halo is longer than the shard it is taken from.
    if (m > 1) {
      EXPECT_THROW(on_line(s, s.input(2 * (m - 1)), 2), ShapeError);
    }
    EXPECT_NO_THROW(on_line(s, s.input(2 * m), 2));
  }
}

TEST(GraphMinShardRows, SplitsAtAndAboveTheMinimumEqualOneDevice) {
  for (const Subject& s : subjects()) {
    const int64_t m = s.min_frames;
    for (int parts : {2, 3}) {
      // Shards of exactly the minimum, then of one more frame with a padded tail.
      for (int64_t T : {parts * m, parts * (m + 1) - 1}) {
        const std::string what = s.name + " 1x" + std::to_string(parts) + " T " + std::to_string(T);
        ASSERT_TRUE(time_split_fits(T, parts, m)) << what;
        const Tensor x = s.input(T);
        const Tensor ref = on_line(s, x, 1), got = on_line(s, x, parts);
        ASSERT_EQ(got.shape(), ref.shape()) << what;
        const test::CompareStats st = test::compare(got, ref);
        std::printf("%-50s max |d| %.3g\n", what.c_str(), st.max_abs);
        // Not bit-identical: measured max |d| up to 9.3e-7 (BigVGAN v2, 1x3), rel L2 1.2e-6.
        EXPECT_TRUE(test::close_rel_l2(got, ref, 2e-6, what));
        EXPECT_LE(st.max_abs, 4e-6) << what;
      }
    }
  }
}

// ---- one copy of the rule -----------------------------------------------------------------------

// Code lines (comments dropped) of every C++ file under `dir`.
struct CodeLine {
  std::string path;
  int line;
  std::string code;
};
std::vector<CodeLine> code_lines(const std::string& dir) {
  std::vector<CodeLine> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string path = e.path().string();
    if (!e.is_regular_file() || !(path.ends_with(".cc") || path.ends_with(".h"))) continue;
    std::ifstream in(path);
    int n = 0;
    for (std::string line; std::getline(in, line);)
      out.push_back({path, ++n, line.substr(0, line.find("//"))});
  }
  return out;
}

bool under(const std::string& path, const char* part) {
  return path.find(part) != std::string::npos;
}

TEST(GraphHaloRule, NoSecondCopyOutsideTheGraph) {
  const std::string root = MESHNN_SOURCE_DIR;
  std::vector<CodeLine> lines = code_lines(root + "/src");
  for (CodeLine& l : code_lines(root + "/include")) lines.push_back(std::move(l));
  EXPECT_GT(lines.size(), 10000u);
  for (const CodeLine& l : lines) {
    const std::string at = l.path + ":" + std::to_string(l.line);
    // Hand-set minimum frames per device: derived from the graph instead.
    EXPECT_EQ(l.code.find("MinFramesPerDevice"), std::string::npos) << at;
    EXPECT_FALSE(l.code.find("constexpr") != std::string::npos &&
                 l.code.find("frames_per_device") != std::string::npos)
        << at;
    if (under(l.path, "/src/graph/")) continue;
    // Halos are asked for by graph nodes only (TimeShard::halo's own file aside).
    if (!under(l.path, "/layers/time_shard.")) {
      EXPECT_EQ(l.code.find("ts.halo("), std::string::npos) << at << " exchanges a halo";
    }
    // The activation's context is read by its own layer, its sharded form and the graph.
    if (!under(l.path, "/layers/activation.") && !under(l.path, "/layers/time_shard.cc")) {
      EXPECT_EQ(l.code.find("context_rows()"), std::string::npos) << at << " halo arithmetic";
    }
    // The transposed conv's halo used to be computed from its kernel in time_shard.cc.
    if (under(l.path, "/layers/time_shard.")) {
      EXPECT_EQ(l.code.find("kernel_size"), std::string::npos) << at << " halo arithmetic";
      EXPECT_EQ(l.code.find("dilation"), std::string::npos) << at << " halo arithmetic";
    }
    // MiniMax-H3's minimum used the literal halos of its encoder units (27) and convs (3).
    if (under(l.path, "/minimax_h3/model.cc")) {
      EXPECT_EQ(l.code.find("need("), std::string::npos) << at << " halo arithmetic";
      EXPECT_EQ(l.code.find("27"), std::string::npos) << at << " a literal halo";
    }
  }
}

}  // namespace
}  // namespace meshnn::graph
