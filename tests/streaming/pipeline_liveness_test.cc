// Liveness of the local stream pipeline (issue 23, item 3 on the local backend): a stage stuck in
// one step past the bound ends the caller's wait with a CommError naming the stage and the
// timeout, within about the bound; a producer that pauses between pushes is not a fault.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "graph/graph.h"
#include "meshnn/core/error.h"
#include "streaming/stream_engine.h"
#include "support/stream_test_util.h"

namespace meshnn::streaming {
namespace {

using Clock = std::chrono::steady_clock;

// Identity on rows; when `stall` is armed, its next push sleeps `stall_s` first (once).
class Passthrough final : public Node {
 public:
  Passthrough(std::shared_ptr<std::atomic<bool>> stall, double stall_s)
      : stall_(std::move(stall)), stall_s_(stall_s) {}
  Tensor run(const Tensor& x, const TimeShard&, int64_t) override { return x; }
  int64_t out_rows(int64_t n) const override { return n; }
  graph::Reach reach() const override { return {}; }
  Tensor push(const Tensor& in) override {
    if (stall_ && stall_->exchange(false))
      std::this_thread::sleep_for(std::chrono::duration<double>(stall_s_));
    return in;
  }
  Tensor flush() override { return Tensor(); }
  void reset() override {}
  int64_t final_rows(int64_t n) const override { return n; }
  int64_t held_rows() const override { return 0; }
  NodePtr fork() const override { return std::make_unique<Passthrough>(stall_, stall_s_); }
  void save_state(graph::StreamState&) const override {}  // stateless
  void load_state(graph::StateReader&) override {}

 private:
  std::shared_ptr<std::atomic<bool>> stall_;
  double stall_s_;
};

// A 1x2 pipeline of two pass-through stages (the second may stall) with liveness bound `bound`.
std::unique_ptr<StreamEngine> two_stages(std::shared_ptr<std::atomic<bool>> stall, double stall_s,
                                         double bound) {
  std::vector<NodePtr> ops;
  ops.push_back(std::make_unique<Passthrough>(nullptr, 0));
  ops.push_back(std::make_unique<Passthrough>(std::move(stall), stall_s));
  MeshConfig mc;
  mc.rows = 1;
  mc.cols = 2;
  mc.threads_per_device = 1;
  mc.timeout_seconds = bound;
  return pipeline_engine(graph::sequence(std::move(ops)), mc, test::random_rows({1, 4, 3}, 1));
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(PipelineLiveness, StuckStageEndsTheWaitWithATimeoutNamingIt) {
  auto stall = std::make_shared<std::atomic<bool>>(false);
  const double bound = 0.3, stall_s = 3.0;
  auto engine = two_stages(stall, stall_s, bound);
  const Tensor rows = test::random_rows({1, 4, 3}, 2);
  stall->store(true);
  const auto t0 = Clock::now();
  engine->push(rows);  // stage 1 now sleeps 3 s inside its step
  std::string what;
  try {
    engine->flush();
    ADD_FAILURE() << "flush returned while stage 1 was stuck";
  } catch (const CommError& e) {
    what = e.what();
  }
  const double took = seconds_since(t0);
  EXPECT_GE(took, bound);
  EXPECT_LT(took, bound + 1.5) << "the wait was not bounded";  // well before the 3 s stall ends
  EXPECT_NE(what.find("liveness timeout, no progress for 0.3 s"), std::string::npos) << what;
  EXPECT_NE(what.find("stage 1 of 2"), std::string::npos) << what;
  EXPECT_NE(what.find("MESHNN_COMM_TIMEOUT"), std::string::npos) << what;
  // The pipeline stays stopped: the next call raises the same error, it does not wait.
  try {
    engine->push(rows);
    ADD_FAILURE() << "push after the timeout";
  } catch (const CommError& e) {
    EXPECT_EQ(std::string(e.what()), what);
  }
  engine.reset();  // joins the stage thread once its 3 s step ends
}

TEST(PipelineLiveness, ProducerPausedBetweenPushesIsNotAFault) {
  const double bound = 0.2;
  auto engine = two_stages(nullptr, 0, bound);
  const Tensor a = test::random_rows({1, 4, 3}, 3), b = test::random_rows({1, 5, 3}, 4);
  std::vector<Tensor> parts;
  auto keep = [&](const Tensor& y) {
    if (y.defined() && y.dim(1) > 0) parts.push_back(y);
  };
  keep(engine->push(a));
  std::this_thread::sleep_for(std::chrono::duration<double>(5 * bound));  // idle: every stage waits
  keep(engine->push(b));
  std::this_thread::sleep_for(std::chrono::duration<double>(5 * bound));
  keep(engine->flush());
  const Tensor got = concat(parts, 1);
  const Tensor want = concat({a, b}, 1);
  EXPECT_EQ(test::max_abs_diff(got, want), 0.0);
}

TEST(PipelineLiveness, ZeroBoundWaitsForASlowStep) {
  auto stall = std::make_shared<std::atomic<bool>>(false);
  auto engine = two_stages(stall, 0.6, 0);  // 0 = wait forever: a slow step is not an error
  stall->store(true);
  const Tensor rows = test::random_rows({1, 4, 3}, 5);
  std::vector<Tensor> parts;
  const Tensor y = engine->push(rows);
  if (y.defined() && y.dim(1) > 0) parts.push_back(y);
  const Tensor tail = engine->flush();
  if (tail.defined() && tail.dim(1) > 0) parts.push_back(tail);
  EXPECT_EQ(test::max_abs_diff(concat(parts, 1), rows), 0.0);
}

}  // namespace
}  // namespace meshnn::streaming
