// Sharded safetensors (meshnn/io/sharded_safetensors.h) and the Hugging Face GR00T folder: a
// checkpoint split into shards + model.safetensors.index.json + an upstream config.json loads in
// gr00t::Policy / Adapter and gives the single file's results bit for bit; every way the index can
// disagree with the files is a FormatError naming the file and the key.
#include "meshnn/io/sharded_safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "io/json.h"
#include "meshnn/core/error.h"
#include "meshnn/gr00t.h"
#include "meshnn/io/safetensors.h"
#include "support/expect_error.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace meshnn::gr00t;

// A temp folder of its own, removed at the end.
struct TempFolder {
  fs::path dir;
  explicit TempFolder(const std::string& tag) {
    dir = fs::temp_directory_path() /
          ("meshnn_sharded_" + tag + "_" +
           std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
           std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempFolder() { fs::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::string shard_name(int k, int n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05d-of-%05d.safetensors", k + 1, n);
  return buf;
}

// Writes `tensors` round-robin into n shards + the index (weight_map as written) in `dir`;
// → the index JSON, for tests that corrupt it.
json write_sharded(const TempFolder& dir, const std::map<std::string, Tensor>& tensors, int n) {
  std::vector<std::map<std::string, Tensor>> shards(static_cast<size_t>(n));
  json wm = json::object();
  int i = 0;
  for (const auto& [k, t] : tensors) {
    shards[static_cast<size_t>(i % n)].emplace(k, t);
    wm[k] = shard_name(i % n, n);
    ++i;
  }
  for (int s = 0; s < n; ++s)
    io::save_safetensors(dir / shard_name(s, n), shards[static_cast<size_t>(s)],
                         {{"format", "pt"}});
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", wm}};
  std::ofstream(dir / "model.safetensors.index.json") << index.dump(2);
  return index;
}

// The checkpoint as released: the head's tensors (no golden inputs / outputs) and a few backbone
// tensors the head ignores.
std::map<std::string, Tensor> released_tensors(const io::SafetensorsFile& f) {
  std::map<std::string, Tensor> t;
  for (const std::string& k : f.keys())
    if (k.rfind("action_head.", 0) == 0) t.emplace(k, f.get(k));
  t.emplace("backbone.model.embed_tokens.weight", random_uniform({5, 3}, 1));
  t.emplace("backbone.model.norm.weight", random_uniform({3}, 2));
  return t;
}

struct Case {
  Version v;
  const char* head;
  const char* config;
  int shards;
};

TEST(Gr00tFolder, ShardedFolderEqualsTheSingleFileBitForBit) {
  for (const Case& c :
       {Case{Version::n1_5, "gr00t_head_n1_5.safetensors", "gr00t_n1_5_isaac.json", 2},
        Case{Version::n1_6, "gr00t_head_n1_6.safetensors", "gr00t_n1_6_isaac.json", 3},
        Case{Version::n1_7, "gr00t_head_n1_7.safetensors", "gr00t_n1_7_lerobot.json", 3}}) {
    SCOPED_TRACE(c.head);
    const io::SafetensorsFile f = open_fixture(c.head);
    TempFolder dir(version_name(c.v));
    write_sharded(dir, released_tensors(f), c.shards);
    fs::copy_file(fixture_path(std::string("configs/") + c.config), dir / "config.json");
    const Tensor types = f.get("input.token_types"), feats = f.get("input.features");
    const Tensor state = f.get("input.state"), noise = f.get("input.noise");
    const int emb = std::stoi(f.metadata().at("embodiment"));
    const Policy folder = Policy::load(dir.dir.string(), c.v, types);
    const Policy file = Policy::load(fixture_path(c.head), c.v, types);
    EXPECT_TRUE(bit_equal(folder.get_action(feats, Tensor(), state, emb, noise),
                          file.get_action(feats, Tensor(), state, emb, noise), "actions"));
    EXPECT_TRUE(close_rel_l2(folder.get_action(feats, Tensor(), state, emb, noise),
                             f.get("golden.actions"), 1e-5, "golden"));
    EXPECT_EQ(folder.config().select_layer, c.v == Version::n1_5 ? 12 : 16);  // config.json's
    const Adapter a = Adapter::load(dir.dir.string(), c.v, types);
    const Adapter b = Adapter::load(fixture_path(c.head), c.v, types);
    const auto ta = a.named_tensors(a.run(feats, Tensor(), state, emb));
    const auto tb = b.named_tensors(b.run(feats, Tensor(), state, emb));
    ASSERT_EQ(ta.size(), tb.size());
    for (const auto& [k, t] : tb) EXPECT_TRUE(bit_equal(ta.at(k), t, k));
  }
}

TEST(Gr00tFolder, SingleFileFolderAndMissingConfigJson) {
  const io::SafetensorsFile f = open_fixture("gr00t_head_n1_7.safetensors");
  TempFolder dir("single");
  io::save_safetensors(dir / "model.safetensors", released_tensors(f));
  const Tensor types = f.get("input.token_types");
  try {
    Policy::load(dir.dir.string(), Version::n1_7, types);
    ADD_FAILURE() << "a folder without config.json loaded";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
  }
  fs::copy_file(fixture_path("configs/gr00t_n1_7_lerobot.json"), dir / "config.json");
  EXPECT_NO_THROW(Policy::load(dir.dir.string(), Version::n1_7, types));
  // The folder's config.json is the config: one naming another version is refused.
  EXPECT_THROW(Policy::load(dir.dir.string(), Version::n1_6, types), InvalidArgument);
}

std::map<std::string, Tensor> three_tensors() {
  return {{"a.weight", random_uniform({2, 3}, 3)},
          {"b.weight", random_uniform({4}, 4)},
          {"c.bias", random_uniform({3}, 5)}};
}

TEST(ShardedSafetensors, ReadsEveryShardThroughTheIndex) {
  TempFolder dir("ok");
  const auto t = three_tensors();
  write_sharded(dir, t, 2);
  const io::ShardedSafetensors s = io::ShardedSafetensors::open_folder(dir.dir.string());
  EXPECT_EQ(s.keys().size(), 3u);
  EXPECT_EQ(s.files().size(), 3u);  // index + 2 shards
  EXPECT_EQ(s.metadata().at("format"), "pt");
  for (const auto& [k, v] : t) EXPECT_TRUE(bit_equal(s.get(k), v, k));
  EXPECT_THROW(s.get("nope"), WeightError);
}

TEST(ShardedSafetensors, IndexDisagreeingWithTheFilesIsRefused) {
  const std::string one = shard_name(0, 2), two = shard_name(1, 2);
  // The index says a.weight lives in shard 2 (it is in shard 1): listed-missing and unlisted.
  {
    TempFolder dir("moved");
    json index = write_sharded(dir, three_tensors(), 2);
    index["weight_map"]["a.weight"] = two;
    std::ofstream(dir / "model.safetensors.index.json") << index.dump();
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"a.weight", one});
  }
  // A key the index lists that no shard holds.
  {
    TempFolder dir("ghost");
    json index = write_sharded(dir, three_tensors(), 2);
    index["weight_map"]["ghost.weight"] = one;
    std::ofstream(dir / "model.safetensors.index.json") << index.dump();
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"ghost.weight", one, "does not hold it"});
  }
  // A tensor in a shard the index does not list.
  {
    TempFolder dir("unlisted");
    json index = write_sharded(dir, three_tensors(), 2);
    index["weight_map"].erase("c.bias");
    std::ofstream(dir / "model.safetensors.index.json") << index.dump();
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"c.bias", "not listed"});
  }
  // The same key stored in two shards.
  {
    TempFolder dir("twice");
    write_sharded(dir, three_tensors(), 2);
    auto extra = three_tensors();
    std::map<std::string, Tensor> second;
    for (const char* k : {"b.weight", "a.weight"}) second.emplace(k, extra.at(k));
    io::save_safetensors(dir / two, second);
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"a.weight", "two shards", one, two});
  }
  // A shard missing, a shard named outside the folder, no weight_map.
  {
    TempFolder dir("missing");
    write_sharded(dir, three_tensors(), 2);
    fs::remove(dir / two);
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"missing", two});
  }
  {
    TempFolder dir("escape");
    json index = write_sharded(dir, three_tensors(), 2);
    index["weight_map"]["a.weight"] = "../" + one;
    std::ofstream(dir / "model.safetensors.index.json") << index.dump();
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"a.weight", "not a file name"});
  }
  {
    TempFolder dir("nomap");
    write_sharded(dir, three_tensors(), 2);
    std::ofstream(dir / "model.safetensors.index.json") << R"({"metadata": {}})";
    expect_error<FormatError>([&] { io::ShardedSafetensors::open_folder(dir.dir.string()); },
                              {"weight_map"});
  }
  // Neither layout in the folder.
  TempFolder empty("empty");
  EXPECT_THROW(io::ShardedSafetensors::open_folder(empty.dir.string()), InvalidArgument);
}

}  // namespace
}  // namespace meshnn::test
