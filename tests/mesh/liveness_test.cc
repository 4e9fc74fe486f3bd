// Local backend liveness: a device thread that stops making progress (here: sleeps past the bound
// before a collective) makes every other device raise CommError naming it; the bound comes from
// MeshConfig::timeout_seconds or, by default, MESHNN_COMM_TIMEOUT.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"

namespace meshnn {
namespace {

std::vector<std::string> errors_with_a_stalled_device(double timeout, int stalled) {
  MeshConfig c;
  c.cols = 3;
  c.threads_per_device = 1;
  c.timeout_seconds = timeout;
  std::vector<std::string> errors(3);
  std::mutex mu;
  try {
    run_spmd(c, [&](Device& d) {
      try {
        if (d.rank() == stalled) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        Tensor x({2, 4});
        d.ccl().all_gather(x, 0, 1);
      } catch (const CommError& e) {
        std::lock_guard<std::mutex> lk(mu);
        errors[d.rank()] = e.what();
        throw;
      }
    });
    ADD_FAILURE() << "no error";
  } catch (const CommError&) {
  }
  return errors;
}

TEST(LocalLiveness, EveryWaitingDeviceNamesTheSilentOne) {
  const auto errors = errors_with_a_stalled_device(0.3, 1);
  for (int r : {0, 2}) {
    EXPECT_NE(errors[r].find("device(s) 1 (0, 1) did not arrive"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("no progress for 0.3 s"), std::string::npos) << errors[r];
  }
  // The stalled device learns of the abort when it wakes, with the same message.
  EXPECT_NE(errors[1].find("device(s) 1 (0, 1)"), std::string::npos) << errors[1];
}

TEST(LocalLiveness, DefaultBoundComesFromTheEnvironment) {
  ::setenv("MESHNN_COMM_TIMEOUT", "0.25", 1);
  const auto errors = errors_with_a_stalled_device(-1, 2);
  ::unsetenv("MESHNN_COMM_TIMEOUT");
  EXPECT_NE(errors[0].find("no progress for 0.25 s"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("device(s) 2 (0, 2)"), std::string::npos) << errors[0];
  EXPECT_DOUBLE_EQ(resolve_comm_timeout(-1), kDefaultCommTimeoutSeconds);
  EXPECT_DOUBLE_EQ(resolve_comm_timeout(5), 5.0);
  set_default_comm_timeout(9);
  EXPECT_DOUBLE_EQ(resolve_comm_timeout(-1), 9.0);
  set_default_comm_timeout(-1);
}

}  // namespace
}  // namespace meshnn
