// The scale-out rule (src/runtime/scale_rule.h, docs/scale_out.md): items before time, time only
// when the predicted efficiency clears the bound on the given link, otherwise replicas; link
// names; each model's measured cost (src/api/measured_cost.h).
#include "runtime/scale_rule.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "api/measured_cost.h"
#include "meshnn/core/error.h"

namespace meshnn::runtime {
namespace {

TEST(ScaleRule, LinkProfiles) {
  EXPECT_DOUBLE_EQ(parse_link("10g").bytes_per_second, 1.25e9);
  EXPECT_DOUBLE_EQ(parse_link("1g").latency_seconds, 200e-6);
  EXPECT_DOUBLE_EQ(parse_link("100g").latency_seconds, 5e-6);
  const LinkProfile c = parse_link("25:10");
  EXPECT_DOUBLE_EQ(c.bytes_per_second, 25e9 / 8);
  EXPECT_DOUBLE_EQ(c.latency_seconds, 10e-6);
  EXPECT_DOUBLE_EQ(parse_link("2.5:0.5").latency_seconds, 0.5e-6);
  for (const char* bad : {"", "10G", "fast", "0:5", "-1:5", "25:", ":10", "25:10:1", "1e3:5",
                          "2.:5", ".5:5", "25:1.2.3", "99999999999999999999999:1", "25: 10"})
    EXPECT_THROW(parse_link(bad), InvalidArgument) << bad;
  ::setenv("MESHNN_LINK", "1g", 1);
  EXPECT_EQ(auto_link().name, "1g");
  ::setenv("MESHNN_LINK", "2.5g", 1);
  EXPECT_THROW(auto_link(), InvalidArgument);
  ::unsetenv("MESHNN_LINK");
}

TEST(ScaleRule, ItemsBeforeTime) {
  // Even on a link where time would pay, independent items split first (no halos).
  const CallCost cost{10.0, 1e3, 10};
  const ScalePlan p = plan_scale(2, 2, cost, parse_link("100g"));
  EXPECT_EQ(p.kind, SplitKind::items);
  EXPECT_EQ(p.parts, 2);
  // Items that do not divide over the devices do not split by item.
  EXPECT_NE(plan_scale(2, 3, cost, parse_link("100g")).kind, SplitKind::items);
}

TEST(ScaleRule, TimeOnlyWhenComputePerHaloByteBeatsTheLink) {
  // 2 s of compute, 400 exchanges, 4 MB of halos: 100g (2 ms + 0.3 ms) splits, 1g (80 ms of
  // latency + 32 ms of bytes against 1 s per device: efficiency 0.90) too, a 1 s call on 1g not.
  const CallCost heavy{2.0, 4e6, 400};
  EXPECT_EQ(plan_scale(2, 1, heavy, parse_link("100g")).kind, SplitKind::time);
  const ScalePlan slow = plan_scale(2, 1, heavy, parse_link("1g"));
  EXPECT_EQ(slow.kind, SplitKind::time);
  EXPECT_NEAR(slow.time_split_efficiency, 1.0 / (1.0 + 0.112), 1e-3);
  const CallCost light{0.2, 4e6, 400};
  const ScalePlan r = plan_scale(2, 1, light, parse_link("1g"));
  EXPECT_EQ(r.kind, SplitKind::replicas);
  EXPECT_LT(r.time_split_efficiency, kMinTimeSplitEfficiency);
  EXPECT_NE(r.reason.find("replicas"), std::string::npos) << r.reason;
  EXPECT_EQ(plan_scale(2, 1, light, parse_link("100g")).kind, SplitKind::time);
}

TEST(ScaleRule, MeasuredCostsGrowWithTheClip) {
  for (const char* kind : {"ltx-2.3", "bigvgan", "minimax-h3"}) {
    const CallCost a = api::measured_cost(kind, 2), b = api::measured_cost(kind, 4);
    EXPECT_GT(a.compute_seconds, 0) << kind;
    EXPECT_NEAR(b.compute_seconds, 2 * a.compute_seconds, 1e-9) << kind;
    EXPECT_GT(b.halo_bytes, a.halo_bytes) << kind;
  }
}

}  // namespace
}  // namespace meshnn::runtime
