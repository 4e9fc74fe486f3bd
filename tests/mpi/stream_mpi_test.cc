// Streaming as an MPI pipeline (one stage per rank, 1xN with N = the world size): every rank
// pushes the same frames, the last stage's rank receives the samples, which must equal the
// one-shot call computed inside that rank (to f32 rounding), for random cut points.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include "mesh/mpi_comm.h"
#include "meshnn/audio_model.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"
#include "support/stream_test_util.h"

namespace meshnn {
namespace {

constexpr double kTol = 4e-6;  // as the local streaming tests (docs/streaming.md)

StreamOptions pipeline() {
  StreamOptions o;
  o.mesh = "1x" + std::to_string(mesh_detail::mpi_world_size());
  o.backend = Backend::mpi;
  o.threads = 1;
  return o;
}

RunOptions one_device() {
  RunOptions r;
  r.mesh = "1x1";
  r.threads = 1;
  return r;
}

// Frames along dim 2 cut at `cuts`, then flush: the samples this rank received.
template <class Stream>
Tensor push_cut(Stream& s, const Tensor& in, const std::vector<int64_t>& cuts) {
  return test::push_cut(s, in, cuts, 2, 2);
}

TEST(StreamMpi, LtxDecoderPipelineEqualsOneShot) {
  for (const char* ckpt : {"ltx23_small.safetensors", "ltx2_small.safetensors"}) {
    const AudioModel dec = AudioModel::load(test::fixture_path(ckpt));
    const int64_t T = 9;
    const Tensor latent = test::random_rows({1, 8, T, 16}, 71, -2.f, 2.f);
    AudioStream s = dec.stream(pipeline());
    const bool last = mesh_detail::mpi_world_rank() == mesh_detail::mpi_world_size() - 1;
    EXPECT_EQ(s.returns_output(), last);
    const Tensor ref = last ? dec.run(latent, one_device()) : Tensor();
    for (const auto& cuts : {std::vector<int64_t>{}, test::random_cuts(T, 3, 8),
                             std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}}) {
      const Tensor y = push_cut(s, latent, cuts);
      bool ok = true;
      if (last) {
        const double d = test::max_abs_diff(y, ref);
        ok = d <= kTol;
        EXPECT_LE(d, kTol) << ckpt << ", " << cuts.size() << " cuts";
      } else {
        EXPECT_EQ(y.dim(2), 0);
      }
      EXPECT_TRUE(test::mpi_all_true(ok));
    }
  }
}

TEST(StreamMpi, BigVganPipelineEqualsOneShot) {
  const AudioModel voc = AudioModel::load(test::fixture_path("bigvgan_v2_44k_small.safetensors"));
  const int64_t T = 33;
  const Tensor mel = test::random_rows({1, voc.input_spec().shape[1], T}, 73, -8.f, 1.f);
  AudioStream s = voc.stream(pipeline());
  const Tensor y = push_cut(s, mel, test::random_cuts(T, 6, 9));
  bool ok = true;
  if (s.returns_output()) {
    const double d = test::max_abs_diff(y, voc.run(mel, one_device()));
    ok = d <= kTol;
    EXPECT_LE(d, kTol);
  }
  EXPECT_TRUE(test::mpi_all_true(ok));
}

}  // namespace
}  // namespace meshnn
