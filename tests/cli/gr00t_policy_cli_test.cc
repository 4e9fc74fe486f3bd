// `meshnn gr00t-policy` end to end (runs the CLI binary of the build dir, skipped when it is not
// built): the N1.7 golden's actions from .npy inputs, and bad input failing with no output file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "meshnn/io/npy.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::test {
namespace {

namespace fs = std::filesystem;

TEST(Gr00tPolicyCli, GoldenActionsAndCleanFailures) {
  if (!fs::exists("meshnn"))
    GTEST_SKIP() << "the meshnn CLI is not built in " << fs::current_path();
  const fs::path dir = fs::temp_directory_path() / "meshnn_gr00t_policy_cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::map<std::string, Tensor> t = load_fixture("gr00t_head_n1_7.safetensors");
  auto save = [&](const std::string& name, const Tensor& x) {
    io::save_npy((dir / name).string(), x.clone());
    return (dir / name).string();
  };
  const std::string feat = save("f.npy", t.at("input.features")),
                    types = save("t.npy", t.at("input.token_types")),
                    state = save("s.npy", t.at("input.state")),
                    noise = save("n.npy", t.at("input.noise"));
  Tensor fnan = t.at("input.features").clone();
  fnan.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  const std::string feat_nan = save("fnan.npy", fnan);
  const std::string ck = fixture_path("gr00t_head_n1_7.safetensors");
  const std::string out = (dir / "a.npy").string();
  auto run = [&](const std::string& version, const std::string& f, int emb) {
    fs::remove(out);
    const std::string cmd = "./meshnn gr00t-policy --checkpoint " + ck + " --version " + version +
                            " --features " + f + " --token-types " + types + " --state " + state +
                            " --embodiment " + std::to_string(emb) + " --noise " + noise +
                            " --out " + out + " 2>/dev/null";
    return std::system(cmd.c_str());
  };
  ASSERT_EQ(run("n1.7", feat, 2), 0);
  EXPECT_TRUE(close_rel_l2(io::load_npy(out), t.at("golden.actions"), 1e-5, "cli actions"));
  EXPECT_NE(run("n1.5", feat, 2), 0);  // checkpoint of another version
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(run("n1.7", feat_nan, 2), 0);  // NaN in the features
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(run("n1.7", feat, 4), 0);  // unknown embodiment (4 in the fixture)
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace meshnn::test
