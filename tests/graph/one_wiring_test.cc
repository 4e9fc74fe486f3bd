// The one-graph rule: each audio model's wiring exists once, as a graph (graph/graph.h), and every
// context figure is derived from that graph's reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "meshnn/audio_model.h"
#include "models/bigvgan/model.h"
#include "models/ltx/audio_decoder.h"
#include "support/golden.h"
#include "support/toy_model/toy_model.h"

namespace meshnn::graph {
namespace {

// Model files build graphs; only graph nodes call the layers' sharded forms. A model file that
// called them would be a second (imperative) wiring of the model beside its graph.
TEST(OneWiring, ModelFilesWireLayersOnlyThroughTheGraph) {
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::string(MESHNN_SOURCE_DIR) + "/src/models")) {
    const std::string path = e.path().string();
    if (!e.is_regular_file() || !(path.ends_with(".cc") || path.ends_with(".h"))) continue;
    ++files;
    std::ifstream in(path);
    int line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      const std::string code = line.substr(0, line.find("//"));
      for (const char* call : {"conv1d_sharded(", "conv2d_sharded(", "conv_transpose1d_sharded(",
                               "activation_sharded(", "upsample1d_sharded("})
        EXPECT_EQ(code.find(call), std::string::npos)
            << path << ":" << line_no << " calls " << call << " (wire the model as a graph)";
    }
  }
  EXPECT_GT(files, 5);
}

// The streaming look-ahead (frames an output sample waits for beyond its own) equals the graph's
// right reach, rounded up: the figure the API reports is the one the stream holds back.
int64_t probed_lookahead(const Node& g) {
  const int64_t n = 4096, have = g.final_rows(n);
  int64_t L = 0;
  while (L < n && g.out_rows(n - L) > have) ++L;
  return L;
}

TEST(OneWiring, ReachGivesTheStreamLookahead) {
  for (const char* f : {"bigvgan_v2_24k_small.safetensors", "bigvgan_v2_44k_small.safetensors",
                        "bigvgan_base_24k_small.safetensors"}) {
    auto file = io::SafetensorsFile::open(test::fixture_path(f));
    auto model = models::BigVgan::load(file, "", Precision::fp32);
    for (bool l : {false, true}) {
      NodePtr g = l ? pipeline_layout(model->graph()) : model->graph();
      EXPECT_EQ(g->reach().right.ceil(), probed_lookahead(*g)) << f << " layout " << int(l);
    }
  }
  for (const char* f : {"ltx23_small.safetensors", "ltx2_small.safetensors"}) {
    auto file = io::SafetensorsFile::open(test::fixture_path(f));
    auto model = models::LtxAudioDecoder::load(file, Precision::fp32);
    for (bool l : {false, true}) {
      NodePtr d = model->graph();
      NodePtr v = model->vocoder_graph();
      if (l) {
        d = pipeline_layout(std::move(d));
        v = pipeline_layout(std::move(v));
      }
      EXPECT_EQ(d->reach().right.ceil(), probed_lookahead(*d)) << f << " decoder " << int(l);
      EXPECT_EQ(v->reach().right.ceil(), probed_lookahead(*v)) << f << " vocoder " << int(l);
    }
  }
}

// docs/adding_a_model.md lists the files a contributor writes: each one it names must exist.
TEST(AddingAModel, EveryFileTheGuideNamesExists) {
  const std::string root = MESHNN_SOURCE_DIR;
  std::ifstream in(root + "/docs/adding_a_model.md");
  ASSERT_TRUE(in.good());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int checked = 0;
  for (size_t b = text.find('`'); b != std::string::npos; b = text.find('`', b)) {
    const size_t e = text.find('`', b + 1);
    if (e == std::string::npos) break;
    const std::string path = text.substr(b + 1, e - b - 1);
    b = e + 1;
    const bool tree = path.starts_with("src/") || path.starts_with("include/") ||
                      path.starts_with("tools/") || path.starts_with("tests/") ||
                      path.starts_with("python/");
    if (!tree || path.find('<') != std::string::npos || path.find(' ') != std::string::npos)
      continue;
    ++checked;
    EXPECT_TRUE(std::filesystem::exists(root + "/" + path))
        << "docs/adding_a_model.md names " << path;
  }
  EXPECT_GT(checked, 15);
}

// The guide's table of registered models is the registry's built-in entries, in load order (the
// test binary also registers the toy model of tests/support/toy_model).
TEST(AddingAModel, TheGuideListsEveryRegisteredModel) {
  std::ifstream in(std::string(MESHNN_SOURCE_DIR) + "/docs/adding_a_model.md");
  ASSERT_TRUE(in.good());
  std::string line;
  std::vector<std::string> listed;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| registry name"))
      in_table = true;
    else if (in_table && line.starts_with("| `"))
      listed.push_back(line.substr(3, line.find('`', 3) - 3));
    else if (in_table && !line.starts_with("|"))
      in_table = false;
  }
  EXPECT_EQ(listed, test::toy::builtin_models());
}

}  // namespace
}  // namespace meshnn::graph
