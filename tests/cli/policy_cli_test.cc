// `meshnn policy` (the generic command over PolicyModel) against the model commands it keeps as
// aliases (the catalog's part commands, gr00t-policy and gr00t-adapter): on a small random GR00T
// checkpoint folder (config.json + model.safetensors, as Isaac-GR00T releases it) and file, the
// same output bytes, the same --describe output and the same exit codes on bad inputs, with
// nothing written. Runs the CLI binary of the build dir (skipped when it is not built).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "meshnn/io/npy.h"
#include "meshnn/io/safetensors.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/scratch_dir.h"

namespace meshnn::test {
namespace {

namespace fs = std::filesystem;

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The head fixture as a released folder: its action-head tensors + the upstream config.json; and
// its inputs as .npy files.
struct Inputs {
  ScratchDir scratch;
  std::string folder, file, features, types, state, noise, nan_features;
  int embodiment = 0;
  Inputs() {
    const io::SafetensorsFile f = open_fixture("gr00t_head_n1_7.safetensors");
    std::map<std::string, Tensor> head;
    for (const std::string& k : f.keys())
      if (k.rfind("action_head.", 0) == 0) head.emplace(k, f.get(k));
    folder = scratch.at("head");
    fs::create_directories(folder);
    io::save_safetensors(folder + "/model.safetensors", head);
    fs::copy_file(fixture_path("configs/gr00t_n1_7_lerobot.json"), folder + "/config.json");
    file = fixture_path("gr00t_head_n1_7.safetensors");
    auto save = [&](const std::string& name, const Tensor& x) {
      io::save_npy(scratch.at(name), x.clone());
      return scratch.at(name);
    };
    features = save("f.npy", f.get("input.features"));
    types = save("t.npy", f.get("input.token_types"));
    state = save("s.npy", f.get("input.state"));
    noise = save("n.npy", f.get("input.noise"));
    Tensor bad = f.get("input.features").clone();
    bad.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    nan_features = save("fnan.npy", bad);
    embodiment = std::stoi(f.metadata().at("embodiment"));
  }
};

// Runs `alias args` and `policy <generic> args` writing to two outputs → both runs; the outputs'
// bytes (empty when absent) in `a` / `b`. The summary line names its command: made equal.
struct Pair {
  CliRun alias, generic;
  std::string a, b;
};
Pair run_pair(const Inputs& s, const std::string& alias, const std::string& generic,
              const std::string& args, const std::string& ext) {
  const std::string oa = s.scratch.at("alias" + ext), ob = s.scratch.at("generic" + ext);
  fs::remove(oa);
  fs::remove(ob);
  const bool out =
      args.find("--describe") == std::string::npos || args.find("--features") != std::string::npos;
  Pair p;
  p.alias = run_meshnn(alias + " " + args + (out ? " --out " + oa : ""));
  p.generic = run_meshnn("policy " + generic + " " + args + (out ? " --out " + ob : ""));
  p.a = fs::exists(oa) ? bytes_of(oa) : "";
  p.b = fs::exists(ob) ? bytes_of(ob) : "";
  const size_t at = p.alias.output.find(oa);
  if (at != std::string::npos) p.alias.output.replace(at, oa.size(), ob);
  const size_t name = p.alias.output.find(alias + ":");
  if (name != std::string::npos) p.alias.output.replace(name, alias.size(), "policy");
  return p;
}

// writes: whether the runs write an output (a --describe alone does not).
void expect_same(const Pair& p, bool ok, const std::string& what, bool writes = true) {
  SCOPED_TRACE(what);
  EXPECT_EQ(p.alias.code, p.generic.code) << p.alias.output << "\n---\n" << p.generic.output;
  EXPECT_EQ(p.alias.code == 0, ok) << p.alias.output;
  EXPECT_EQ(p.a, p.b);
  EXPECT_EQ(p.a.empty(), !(ok && writes));
  if (ok) {
    EXPECT_EQ(p.alias.output, p.generic.output);
  }
}

TEST(PolicyCli, AliasesEqualTheGenericCommand) {
  if (!fs::exists(meshnn_binary())) GTEST_SKIP() << "the meshnn CLI is not built";
  const Inputs s;
  const std::string emb = " --embodiment " + std::to_string(s.embodiment);
  const std::string common = " --version n1.7 --token-types " + s.types + " --features " +
                             s.features + " --state " + s.state;
  for (const std::string& ck : {s.folder, s.file}) {
    const std::string in = "--checkpoint " + ck + common;
    expect_same(
        run_pair(s, "gr00t-policy", "", in + emb + " --noise " + s.noise + " --describe", ".npy"),
        true, "policy, given noise, " + ck);
    expect_same(run_pair(s, "gr00t-adapter", "--part adapter", in + emb, ".safetensors"), true,
                "adapter, " + ck);
  }
  const std::string in = "--checkpoint " + s.folder + common;
  expect_same(
      run_pair(s, "gr00t-policy", "--model gr00t", in + emb + " --seed 7 --steps 2", ".npy"), true,
      "policy, seeded, 2 steps");
  expect_same(run_pair(s, "gr00t-adapter", "--part adapter",
                       in + emb + " --precision bf16 --gather-mode onehot --taps", ".safetensors"),
              true, "adapter, bf16, onehot, taps");
  expect_same(run_pair(s, "gr00t-adapter", "--part adapter",
                       "--checkpoint " + s.folder + " --version n1.7 --token-types " + s.types +
                           " --describe",
                       ".safetensors"),
              true, "adapter, --describe alone", false);
  // Bad inputs: the same exit codes, nothing written.
  const std::string bad_version = "--checkpoint " + s.folder + " --version n1.5 --token-types " +
                                  s.types + " --features " + s.features + " --state " + s.state;
  expect_same(run_pair(s, "gr00t-policy", "", bad_version + emb, ".npy"), false, "version");
  const std::string nan = "--checkpoint " + s.folder + " --version n1.7 --token-types " + s.types +
                          " --features " + s.nan_features + " --state " + s.state;
  expect_same(run_pair(s, "gr00t-policy", "", nan + emb, ".npy"), false, "NaN features");
  expect_same(run_pair(s, "gr00t-adapter", "--part adapter", nan + emb, ".safetensors"), false,
              "NaN features, adapter");
  expect_same(run_pair(s, "gr00t-policy", "", in + " --embodiment 4", ".npy"), false,
              "embodiment out of range");
  expect_same(run_pair(s, "gr00t-adapter", "--part adapter",
                       "--checkpoint " + s.folder + " --version n1.7 --token-types " + s.types,
                       ".safetensors"),
              false, "adapter without features");
}

TEST(PolicyCli, GenericCommandFindsItsModelAndListsTheCatalog) {
  if (!fs::exists(meshnn_binary())) GTEST_SKIP() << "the meshnn CLI is not built";
  const Inputs s;
  const std::string args = " --version n1.7 --token-types " + s.types + " --features " +
                           s.features + " --state " + s.state + " --embodiment 0 --out " +
                           s.scratch.at("x.npy");
  // An audio checkpoint is no policy model: refused before anything is written.
  const CliRun audio =
      run_meshnn("policy --checkpoint " + fixture_path("ltx23_small.safetensors") + args);
  EXPECT_NE(audio.code, 0);
  EXPECT_NE(audio.output.find("not a policy model"), std::string::npos) << audio.output;
  EXPECT_FALSE(fs::exists(s.scratch.at("x.npy")));
  // The whole policy needs its state (checked before the load).
  const CliRun no_state =
      run_meshnn("policy --checkpoint " + s.folder + " --version n1.7 --token-types " + s.types +
                 " --features " + s.features + " --embodiment 0 --out " + s.scratch.at("x.npy"));
  EXPECT_NE(no_state.code, 0);
  EXPECT_NE(no_state.output.find("--state is required"), std::string::npos) << no_state.output;
  // The help lists the registered policy models and their parts.
  const CliRun help = run_meshnn("policy --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.output.find("gr00t"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("policy | adapter"), std::string::npos) << help.output;
}

}  // namespace
}  // namespace meshnn::test
