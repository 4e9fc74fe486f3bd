// MiniMax-H3 on a mesh (local threads backend) and as a stream, through the public
// AudioModel over the tiny fixture (hop 40): the stereo items split over axis 1 (1x2), time
// split over axis 0 (2x1, 3x1), both (2x2), mono time-split over axis 1; each equal to one device
// to f32 rounding (rel L2 ≤ 1e-6, max |Δ| ≤ 4e-6, the rows around every shard seam checked on
// their own) and to the PyTorch golden. The streamed decode (frame by frame, on one device and as
// a 1x2 pipeline) equals the one-shot decode, and holds back exactly its look-ahead; the streamed
// encode (samples pushed in odd-sized pieces, on one device and as a 1x2 pipeline) equals the
// one-shot encode, frames coming out once their look-ahead has arrived.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "meshnn/audio_model.h"
#include "meshnn/core/error.h"
#include "models/minimax_h3/model.h"
#include "runtime/mesh_plan.h"
#include "support/fixtures.h"
#include "support/golden.h"

namespace meshnn {
namespace {

const AudioModel& vae() {
  static const AudioModel v = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  return v;
}

// The model itself, for its minimum frames per device (what a mesh check refuses below).
const models::minimax_h3::Model& h3_model() {
  static const std::unique_ptr<models::minimax_h3::Model> m =
      models::minimax_h3::Model::load(test::fixture_path("minimax_h3_tiny"), Precision::fp32);
  return *m;
}

// A call's options as a stream's: "auto" is one device.
StreamOptions as_stream(const RunOptions& r) {
  StreamOptions o;
  o.mesh = r.mesh == "auto" ? "1x1" : r.mesh;
  o.backend = r.backend;
  o.threads = r.threads;
  return o;
}

Tensor io_tensor(const std::string& key) {
  static const std::map<std::string, Tensor> io =
      test::load_fixture("minimax_h3_tiny_io.safetensors");
  return io.at(key).to(DType::f32);
}

RunOptions on(const std::string& mesh) {
  RunOptions r;
  r.mesh = mesh;
  r.threads = 1;
  return r;
}

double max_abs_diff(const Tensor& a, const Tensor& b) { return test::compare(a, b).max_abs; }

// a, b: (B, C, N) rows [lo, hi) of the last dim (clamped), as (B, C, hi − lo) copies.
Tensor cols(const Tensor& t, int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min(hi, t.dim(2));
  return t.narrow(2, lo, hi - lo);
}

// The time line of `mesh` for a batch of `batch` items, and its shard length in latent frames.
struct Line {
  int parts;
  int64_t shard;
};
Line line_of(const std::string& mesh, int64_t batch, int64_t frames) {
  const MeshConfig mc = parse_mesh(mesh);
  const runtime::MeshSplit s = runtime::split_mesh(mc.rows, mc.cols, batch);
  return {s.time_parts, (frames + s.time_parts - 1) / s.time_parts};
}

// Sharded vs one device: the whole output, then ±2 latent frames around every seam (the rows that
// read a neighbour's halo) on their own. y, ref: (B, C, T·per) with `per` rows per latent frame.
void expect_like_one_device(const Tensor& y, const Tensor& ref, const Line& line, int64_t per,
                            const std::string& what) {
  ASSERT_EQ(y.shape(), ref.shape()) << what;
  EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-6, what));
  EXPECT_LE(max_abs_diff(y, ref), 4e-6) << what;
  for (int k = 1; k < line.parts; ++k) {
    const int64_t seam = k * line.shard * per;
    const Tensor a = cols(y, seam - 2 * per, seam + 2 * per);
    const Tensor b = cols(ref, seam - 2 * per, seam + 2 * per);
    EXPECT_TRUE(test::close_rel_l2(a, b, 1e-6, what + " seam " + std::to_string(k)));
    EXPECT_LE(max_abs_diff(a, b), 4e-6) << what << " seam " << k;
  }
}

TEST(MiniMaxH3Mesh, SplitRule) {
  auto s = runtime::split_mesh(1, 2, 2);  // stereo on 1x2: one item per column, no time split
  EXPECT_EQ(s.item_parts, 2);
  EXPECT_TRUE(s.time_axes.empty());
  EXPECT_EQ(s.time_parts, 1);
  s = runtime::split_mesh(2, 1, 2);
  EXPECT_EQ(s.item_parts, 1);
  EXPECT_EQ(s.time_axes, (std::vector<int>{0}));
  EXPECT_EQ(s.time_parts, 2);
  s = runtime::split_mesh(2, 2, 2);
  EXPECT_EQ(s.item_parts, 2);
  EXPECT_EQ(s.time_axes, (std::vector<int>{0}));
  EXPECT_EQ(s.time_parts, 2);
  s = runtime::split_mesh(1, 2, 1);  // mono: time over axis 1
  EXPECT_EQ(s.item_parts, 1);
  EXPECT_EQ(s.time_axes, (std::vector<int>{1}));
  s = runtime::split_mesh(2, 2, 3);  // 3 items do not split over 2 columns: time over both axes
  EXPECT_EQ(s.item_parts, 1);
  EXPECT_EQ(s.time_axes, (std::vector<int>{0, 1}));
  EXPECT_EQ(s.time_parts, 4);
  s = runtime::split_mesh(1, 1, 2);
  EXPECT_EQ(s.item_parts, 1);
  EXPECT_TRUE(s.time_axes.empty());
}

TEST(MiniMaxH3Mesh, DecodeOnEveryMeshEqualsOneDevice) {
  const int64_t T = 17;  // not a multiple of 2 or 3: the last shard has padded tail rows
  const Tensor z = test::random_normal({2, 8, T}, 31);
  const Tensor ref = vae().run(z, on("1x1"));
  for (const char* mesh : {"1x2", "2x1", "3x1", "2x2"}) {
    const Tensor y = vae().run(z, on(mesh));
    expect_like_one_device(y, ref, line_of(mesh, 2, T), 40, std::string("decode ") + mesh);
  }
  // The stereo split never mixes the items: item 1 on its own equals item 1 of the batch.
  const Tensor item1 = vae().run(z.narrow(0, 1, 1), on("1x1"));
  EXPECT_TRUE(test::close_rel_l2(vae().run(z, on("1x2")).narrow(0, 1, 1), item1, 1e-6));
  // Mono on 1x2 is split in time over axis 1.
  const Tensor mono = z.narrow(0, 0, 1);
  expect_like_one_device(vae().run(mono, on("1x2")), vae().run(mono, on("1x1")),
                         line_of("1x2", 1, T), 40, "decode mono 1x2");
}

TEST(MiniMaxH3Mesh, EncodeOnEveryMeshEqualsOneDevice) {
  const int64_t L = 40 * 17 - 13;  // a partial last hop: 17 latents
  const Tensor w = test::random_uniform({2, 1, L}, 32, -0.5f, 0.5f);
  Tensor ref_logs;
  const Tensor ref = vae().encode(w, on("1x1"), &ref_logs);
  ASSERT_EQ(ref.shape(), (Shape{2, 8, 17}));
  for (const char* mesh : {"1x2", "2x1", "2x2"}) {
    Tensor logs;
    const Tensor mean = vae().encode(w, on(mesh), &logs);
    expect_like_one_device(mean, ref, line_of(mesh, 2, 17), 1, std::string("encode mean ") + mesh);
    expect_like_one_device(logs, ref_logs, line_of(mesh, 2, 17), 1,
                           std::string("encode logs ") + mesh);
  }
  const Tensor mono = w.narrow(0, 1, 1);
  expect_like_one_device(vae().encode(mono, on("1x2"), nullptr),
                         vae().encode(mono, on("1x1"), nullptr), line_of("1x2", 1, 17), 1,
                         "encode mono 1x2");
}

TEST(MiniMaxH3Mesh, EveryMeshMatchesThePyTorchGolden) {
  const Tensor z = io_tensor("decode.latents");  // (2, 8, 12)
  const Tensor ref = io_tensor("decode.output");
  const Tensor wave = io_tensor("encode.wave");  // (2, 1, 413): 11 latents, the last partial
  for (const char* mesh : {"1x1", "1x2", "2x1", "2x2"}) {
    const Tensor y = vae().run(z, on(mesh));
    EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-5, std::string("golden decode ") + mesh));
    EXPECT_GT(test::compare(y, ref).psnr_db, 100.0) << mesh;
    Tensor logs;
    const Tensor mean = vae().encode(wave, on(mesh), &logs);
    EXPECT_TRUE(test::close_rel_l2(mean, io_tensor("encode.mean"), 1e-5,
                                   std::string("golden encode mean ") + mesh));
    EXPECT_TRUE(test::close_rel_l2(logs, io_tensor("encode.logs"), 1e-5,
                                   std::string("golden encode logs ") + mesh));
  }
}

TEST(MiniMaxH3Mesh, TooShortForTheSplitFailsBeforeAnyWork) {
  const int64_t need = h3_model().min_decode_frames_per_device();
  EXPECT_GE(need, 5);  // the first stage's k11 d5 blocks reach 25 rows at 5 rows per frame
  const Tensor z = test::random_normal({2, 8, need + 1}, 33);  // ⌈(need + 1) / 2⌉ < need
  try {
    vae().run(z, on("2x1"));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 1 device"), std::string::npos) << e.what();
  }
  // Exactly the minimum per device (a halo as long as the shard) fits and is exact.
  const Tensor fits = test::random_normal({2, 8, 2 * need - 1}, 39);
  expect_like_one_device(vae().run(fits, on("2x1")), vae().run(fits, on("1x1")),
                         line_of("2x1", 2, 2 * need - 1), 40, "decode at the minimum");
  // The stereo split alone needs no minimum length.
  EXPECT_EQ(vae().run(z.narrow(2, 0, 1), on("1x2")).shape(), (Shape{2, 1, 40}));
  const Tensor w = test::random_uniform(
      {2, 1, 40 * (h3_model().min_encode_frames_per_device() + 1)}, 34, -0.5f, 0.5f);
  EXPECT_THROW(vae().encode(w, on("2x1"), nullptr), ShapeError);
  RunOptions mpi_auto;
  mpi_auto.backend = Backend::mpi;
  EXPECT_THROW(vae().run(z, mpi_auto), InvalidArgument);
  EXPECT_THROW(vae().run(z, on("2")), InvalidArgument);
}

TEST(MiniMaxH3Mesh, ConcurrentCallsEqualSerialOnes) {
  const Tensor z = test::random_normal({2, 8, 12}, 35);
  const Tensor ref = vae().run(z, on("1x1"));
  const Tensor ref2 = vae().run(z, on("1x2"));
  Tensor a, b;
  std::thread t1([&] { a = vae().run(z, on("1x1")); });
  std::thread t2([&] { b = vae().run(z, on("1x2")); });
  t1.join();
  t2.join();
  EXPECT_TRUE(test::bit_equal(a, ref, "concurrent 1x1"));
  EXPECT_TRUE(test::bit_equal(b, ref2, "concurrent 1x2"));
}

// ---- streaming ----------------------------------------------------------------------------------

Tensor stream_all(AudioStream& s, const Tensor& z, int64_t chunk) {
  std::vector<Tensor> parts;
  for (int64_t t = 0; t < z.dim(2); t += chunk) {
    const Tensor y = s.push(z.narrow(2, t, std::min(chunk, z.dim(2) - t)));
    EXPECT_EQ(y.dim(0), z.dim(0));
    EXPECT_EQ(y.dim(1), 1);
    if (y.dim(2) > 0) parts.push_back(y);
  }
  parts.push_back(s.flush());
  return concat(parts, 2);
}

TEST(MiniMaxH3Stream, PushedFrameByFrameEqualsOneShot) {
  const Tensor z = test::random_normal({2, 8, 40}, 36);
  const Tensor ref = vae().run(z, on("1x1"));
  AudioStream s = vae().stream(as_stream(on("1x1")));
  EXPECT_EQ(s.sample_rate(), 32000);
  EXPECT_EQ(s.samples_per_frame(), 40);
  for (int64_t chunk : {1, 3, 7, 40}) {
    const Tensor y = stream_all(s, z, chunk);
    EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-6, "stream chunk " + std::to_string(chunk)));
    EXPECT_LE(max_abs_diff(y, ref), 4e-6) << chunk;
  }
  // The stream is reusable after flush and after reset, with another batch size.
  s.push(z.narrow(2, 0, 5));
  s.reset();
  EXPECT_EQ(s.frames_pushed(), 0);
  const Tensor mono = z.narrow(0, 1, 1);
  EXPECT_TRUE(test::close_rel_l2(stream_all(s, mono, 4), vae().run(mono, on("1x1")), 1e-6,
                                 "mono after reset"));
}

TEST(MiniMaxH3Stream, HoldsBackExactlyItsLookahead) {
  AudioStream s = vae().stream(as_stream(on("1x1")));
  const int64_t ahead = s.lookahead_frames();
  EXPECT_GT(ahead, 0);
  EXPECT_DOUBLE_EQ(s.lookahead_ms(), ahead * 40 * 1000.0 / 32000);
  const Tensor z = test::random_normal({1, 8, 3 * ahead}, 37);
  int64_t returned = 0;
  for (int64_t t = 0; t < z.dim(2); ++t) {
    returned += s.push(z.narrow(2, t, 1)).dim(2);
    // After t + 1 frames, the samples of frames [0, t + 1 − ahead) are final, at most one
    // frame's rows short (the reach rounds up to whole frames).
    const int64_t full = std::max<int64_t>(0, t + 1 - ahead) * 40;
    EXPECT_GE(returned, full) << t;
    EXPECT_LT(returned, full + 40) << t;
    EXPECT_EQ(s.samples_returned(), returned);
  }
  EXPECT_EQ(s.frames_pushed(), 3 * ahead);
  EXPECT_EQ(returned + s.flush().dim(2), 3 * ahead * 40);
}

TEST(MiniMaxH3Stream, APipelineOfTwoEqualsOneShot) {
  const Tensor z = test::random_normal({2, 8, 24}, 38);
  const Tensor ref = vae().run(z, on("1x1"));
  AudioStream s = vae().stream(as_stream(on("1x2")));
  EXPECT_EQ(s.mesh(), "1x2");
  EXPECT_TRUE(s.returns_output());
  for (int64_t chunk : {1, 5}) {
    const Tensor y = stream_all(s, z, chunk);
    EXPECT_TRUE(test::close_rel_l2(y, ref, 1e-6, "pipeline chunk " + std::to_string(chunk)));
  }
}

TEST(MiniMaxH3Stream, BadInputsAreRefused) {
  AudioStream s = vae().stream(as_stream(on("1x1")));
  EXPECT_THROW(s.push(Tensor({2, 7, 3})), ShapeError);
  EXPECT_THROW(s.push(Tensor({2, 8, 3}, DType::f64)), ShapeError);
  Tensor nan = Tensor({1, 8, 2});
  nan.data<float>()[3] = NAN;
  EXPECT_THROW(s.push(nan), InvalidArgument);
  s.push(Tensor({2, 8, 2}));
  EXPECT_THROW(s.push(Tensor({1, 8, 2})), ShapeError);  // the batch is fixed until flush
  s.reset();
  EXPECT_THROW(vae().stream(as_stream(on("2x1"))), InvalidArgument);
}

// The wave pushed `chunk` samples at a time, then flushed → (mean, logs), each (B, C, T).
std::pair<Tensor, Tensor> encode_stream_all(AudioEncodeStream& s, const Tensor& w, int64_t chunk) {
  std::vector<Tensor> means, logs;
  for (int64_t a = 0; a < w.dim(2); a += chunk) {
    Tensor l;
    means.push_back(s.push(w.narrow(2, a, std::min(chunk, w.dim(2) - a)).clone(), &l));
    logs.push_back(l);
  }
  Tensor l;
  means.push_back(s.flush(&l));
  logs.push_back(l);
  return {concat(means, 2), concat(logs, 2)};
}

TEST(MiniMaxH3EncodeStream, PushedInPiecesEqualsOneShot) {
  const Tensor w = test::random_uniform({2, 1, 517}, 40, -0.5f, 0.5f);  // 13 frames, last partial
  Tensor ref_logs;
  const Tensor ref = vae().encode(w, on("1x1"), &ref_logs);
  for (const char* mesh : {"1x1", "1x2"}) {
    auto s = vae().encode_stream(on(mesh));
    EXPECT_EQ(s.mesh(), mesh);
    EXPECT_EQ(s.samples_per_frame(), 40);
    for (int64_t chunk : {1, 37, 160, 600}) {
      const auto [mean, logs] = encode_stream_all(s, w, chunk);
      const std::string what = std::string(mesh) + " chunk " + std::to_string(chunk);
      ASSERT_EQ(mean.shape(), (Shape{2, 8, 13})) << what;
      EXPECT_TRUE(test::close_rel_l2(mean, ref, 1e-6, what));
      EXPECT_TRUE(test::close_rel_l2(logs, ref_logs, 1e-6, what + " logs"));
    }
    // Each flush ended its input: a push of another batch is taken.
    EXPECT_EQ(s.push(w.narrow(0, 0, 1).narrow(2, 0, 40).clone()).dim(0), 1);
    s.reset();
  }
}

TEST(MiniMaxH3EncodeStream, FramesComeOutOnceTheirLookaheadArrived) {
  auto s = vae().encode_stream(on("1x1"));
  const int64_t ahead = s.lookahead_samples();
  EXPECT_GT(ahead, 0);
  EXPECT_DOUBLE_EQ(s.lookahead_ms(), ahead * 1000.0 / 32000);
  const int64_t T = 2 * ahead / 40 + 5;
  const Tensor w = test::random_uniform({1, 1, 40 * T}, 41, -0.5f, 0.5f);
  int64_t frames = 0;
  for (int64_t n = 40; n <= w.dim(2); n += 40) {
    frames += s.push(w.narrow(2, n - 40, 40).clone()).dim(2);
    // Frame t is final once sample 40·t + ahead has arrived (n > 40·t + ahead).
    const int64_t final_frames = n > ahead ? (n - ahead - 1) / 40 + 1 : 0;
    EXPECT_EQ(frames, final_frames) << n;
  }
  EXPECT_GT(frames, 0);
  EXPECT_EQ(frames + s.flush().dim(2), T);
}

TEST(MiniMaxH3EncodeStream, BadInputsAreRefused) {
  auto s = vae().encode_stream(on("1x1"));
  EXPECT_THROW(s.push(Tensor({2, 2, 3})), ShapeError);
  EXPECT_THROW(s.push(Tensor({2, 1, 3}, DType::f64)), ShapeError);
  Tensor nan = Tensor({1, 1, 4});
  nan.data<float>()[2] = NAN;
  EXPECT_THROW(s.push(nan), InvalidArgument);
  s.push(Tensor({2, 1, 5}));
  EXPECT_THROW(s.push(Tensor({1, 1, 5})), ShapeError);  // the batch is fixed until flush
  s.reset();
  EXPECT_THROW(vae().encode_stream(on("2x1")), InvalidArgument);
  AudioModelOptions decoder_only;
  decoder_only.decoder_only = true;
  const AudioModel dec = AudioModel::load(test::fixture_path("minimax_h3_tiny"), decoder_only);
  EXPECT_THROW(dec.encode_stream(on("1x1")), InvalidArgument);
  EXPECT_THROW(dec.encode(Tensor({1, 1, 40})), InvalidArgument);
}

}  // namespace
}  // namespace meshnn
