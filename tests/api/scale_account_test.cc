// The per-layer account of a time-sharded call (src/api/scale_account.h, docs/scale_out.md): the
// bytes the account derives from the TimeShard's exchange log equal the bytes the collective layer
// moved in the same 1xP local-mesh run, device by device; the halo bytes do not grow with the
// clip; no exchange moves no rows; the real-size models make 441 (LTX-2.3: 444 measured on the
// wire, 3 of them empty) and 225 (BigVGAN v2 24 kHz) halo exchanges per call.
#include "api/scale_account.h"

#include <gtest/gtest.h>

#include "api/measured_cost.h"
#include "e2e/scale_report.h"
#include "io/json.h"
#include "meshnn/io/safetensors.h"
#include "models/common/audio_description.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn::api {
namespace {

using namespace bench;  // the report's half (bench/e2e/scale_report.h)

// Every device: the account's bytes and counts equal the collective layer's own counters.
void expect_account_matches_ccl(const ScaleAccount& a) {
  ASSERT_EQ(static_cast<int>(a.ccl.size()), a.devices);
  ASSERT_FALSE(a.rows.empty());
  double line = 0;
  for (int i = 0; i < a.devices; ++i) {
    SCOPED_TRACE("device " + std::to_string(i));
    EXPECT_EQ(a.ccl[i].halo_calls, static_cast<int64_t>(a.rows.size()));
    EXPECT_EQ(a.logged_halo_bytes[i], a.ccl[i].halo_bytes);
    EXPECT_GT(a.ccl[i].halo_bytes, 0);
    EXPECT_EQ(a.logged_gather_bytes[i], a.ccl[i].gather_bytes);
    EXPECT_EQ(a.ccl[i].gather_calls, a.tail_rows + 1);  // the tail-row fetches and the output
    line += static_cast<double>(a.ccl[i].halo_bytes + a.ccl[i].gather_bytes);
  }
  EXPECT_DOUBLE_EQ(a.halo_bytes + a.tail_bytes + a.gather_bytes, line);
  for (const ExchangeRow& r : a.rows) {
    EXPECT_GT(r.row_bytes, 0) << r.layer;
    EXPECT_GT(r.left + r.right, 0) << r.layer << ": an exchange of no rows";
  }
}

// The measured costs (api/measured_cost.cc) are this account's numbers: the halo exchanges,
// and the bytes of a call (halos, tail rows, the output gather) within 1 %.
void expect_rule_uses_the_account(const std::string& kind, const ScaleAccount& a) {
  const runtime::CallCost c = measured_cost(kind, a.seconds);
  EXPECT_EQ(c.rounds, static_cast<double>(a.rows.size()));
  const double bytes = a.halo_bytes + a.tail_bytes + a.gather_bytes;
  EXPECT_NEAR(c.halo_bytes, bytes, 0.01 * bytes);
}

models::LtxAudioDecoder ltx_fixture() {
  const io::SafetensorsFile f = test::open_fixture("ltx23_small.safetensors");
  return *models::LtxAudioDecoder::load(f, StagePrecision());
}

TEST(ScaleAccount, LtxHaloBytesEqualTheCollectiveTraffic) {
  const models::LtxAudioDecoder m = ltx_fixture();
  for (int devices : {2, 3}) {
    SCOPED_TRACE("devices " + std::to_string(devices));
    const ScaleAccount a = account_ltx(m, test::random_normal({1, 8, 13, 16}, 37), devices);
    expect_account_matches_ccl(a);
    EXPECT_EQ(a.model, "LTX-2.3");
    // Every convolution of the chain that exchanges is found in the description (FLOPs > 0).
    int convs = 0;
    for (const ExchangeRow& r : a.rows)
      if (r.kind.rfind("conv", 0) == 0) {
        ++convs;
        EXPECT_GT(r.flops, 0) << r.layer;
      }
    EXPECT_GT(convs, 10);
    EXPECT_GT(a.flops, 0);
  }
}

TEST(ScaleAccount, HaloBytesDoNotGrowWithTheClip) {
  // A halo is rows × channels: the clip's length changes the shards, not the halos. The gather
  // of the output grows with it.
  const models::LtxAudioDecoder m = ltx_fixture();
  const ScaleAccount a = account_ltx(m, test::random_normal({1, 8, 9, 16}, 3), 2);
  const ScaleAccount b = account_ltx(m, test::random_normal({1, 8, 31, 16}, 4), 2);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  EXPECT_DOUBLE_EQ(a.halo_bytes, b.halo_bytes);
  EXPECT_GT(b.gather_bytes, 3 * a.gather_bytes);
  expect_account_matches_ccl(b);
}

TEST(ScaleAccount, BigVganHaloBytesEqualTheCollectiveTraffic) {
  const io::SafetensorsFile f = test::open_fixture("bigvgan_v2_24k_small.safetensors");
  const auto m = models::BigVgan::load(f, "", Precision::fp32);
  const std::string prefix = models::nvidia_generator_prefix(
      test::load_fixture("bigvgan_v2_24k_small.safetensors"), m->config().generator);
  const Tensor mel = test::random_normal({1, m->config().num_mels, 41}, 11);
  const ScaleAccount a = account_bigvgan(*m, mel, 2, prefix);
  expect_account_matches_ccl(a);
  int acts = 0;
  for (const ExchangeRow& r : a.rows) {
    acts += r.kind == "activation";
    if (r.kind.rfind("conv", 0) == 0) {
      EXPECT_GT(r.flops, 0) << r.layer;
    }
  }
  EXPECT_GT(acts, 0);
  // The table prints every exchange, the totals and the rule's decision.
  const std::string t = scale_table(a, runtime::parse_link("10g"));
  EXPECT_NE(t.find("totals per call: " + std::to_string(a.rows.size()) + " halo exchanges"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("plan_scale: "), std::string::npos) << t;
}

// The halo exchanges per call do not depend on the length: short clips of the real-size models
// (seeded random weights) give the counts measured for 2 s on the wire. (Slow: building the
// real-size layers takes most of it.)
TEST(ScaleAccount, RealSizeLtx23ExchangeCount) {
  const ScaleAccount ltx = account_random_model("ltx23", 0.16, 2, 5, "");
  // 444 measured before the 3 empty exchanges (the mel-VAE's two k1 shortcut convs and the BWE's
  // mel basis) were dropped.
  EXPECT_EQ(ltx.rows.size(), 441u);
  expect_account_matches_ccl(ltx);
  expect_rule_uses_the_account("ltx-2.3", ltx);
}

TEST(ScaleAccount, RealSizeBigVganExchangeCount) {
  const ScaleAccount bv = account_random_model(
      "bigvgan", 0.3, 2, 5, test::fixture_path("configs/bigvgan_v2_24khz_100band_256x.json"));
  EXPECT_EQ(bv.rows.size(), 225u);
  expect_account_matches_ccl(bv);
  expect_rule_uses_the_account("bigvgan", bv);
}

TEST(ScaleAccount, StreamHandOverPerPush) {
  // Once the look-ahead has filled, each push of N mel frames brings N · hop final samples out of
  // the last operator; the 1x2 cut hands on what its stage 0's last operator made.
  const io::SafetensorsFile f = test::open_fixture("bigvgan_v2_24k_small.safetensors");
  const auto m = models::BigVgan::load(f, "", Precision::fp32);
  const int64_t push = 8, mels = m->config().num_mels;
  const StreamSplit s =
      stream_split("BigVGAN", m->graph(), test::random_normal({1, 96, mels}, 12), push);
  ASSERT_GE(s.pushes, 1);
  const size_t n = s.bytes_per_push.size();
  EXPECT_DOUBLE_EQ(s.bytes_per_push[n - 1], 4.0 * push * m->config().generator.hop());
  ASSERT_GE(s.cut, 1u);
  ASSERT_LT(s.cut, n);
  EXPECT_GT(s.bytes_per_push[s.cut - 1], 0);
  const std::string t = stream_table(s, runtime::parse_link("1g"));
  EXPECT_NE(t.find("stage 0 runs [0, " + std::to_string(s.cut) + ")"), std::string::npos) << t;
  EXPECT_THROW(stream_split("BigVGAN", m->graph(), test::random_normal({1, 8, mels}, 13), push),
               InvalidArgument);
}

TEST(ScaleAccount, RefusesOneDeviceAndUnknownModels) {
  EXPECT_THROW(account_random_model("h3", 2, 2, 0, ""), InvalidArgument);
  const models::LtxAudioDecoder m = ltx_fixture();
  EXPECT_THROW(account_ltx(m, test::random_normal({1, 8, 9, 16}, 3), 1), InvalidArgument);
}

}  // namespace
}  // namespace meshnn::api
