// MiniMax-H3 on the MPI backend (one process per device; CTest runs this binary under mpiexec -np
// 2 and -np 4): the stereo items split over axis 1, time over axis 0, both on 2x2. Every rank gets
// the whole batch; it must equal the one-device call inside this rank (rel L2 ≤ 1e-6, max |Δ| ≤
// 4e-6) and the local-backend run of the same mesh in this rank bit for bit (same arithmetic,
// same collectives). The streamed decode as an MPI pipeline equals the one-shot decode.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mesh/mpi_comm.h"
#include "meshnn/audio_model.h"
#include "mpi/mpi_test_util.h"
#include "support/golden.h"

namespace meshnn {
namespace {

const AudioModel& vae() {
  static const AudioModel v = AudioModel::load(test::fixture_path("minimax_h3_tiny"));
  return v;
}

std::vector<std::string> meshes() {
  switch (mesh_detail::mpi_world_size()) {
    case 2:
      return {"1x2", "2x1"};
    case 4:
      return {"2x2", "4x1"};
    default:
      return {};
  }
}

RunOptions run(const std::string& mesh, Backend b) {
  RunOptions r;
  r.mesh = mesh;
  r.backend = b;
  r.threads = 1;
  return r;
}

// y vs the one-device reference and the local-backend run of the same mesh; all ranks agree.
void expect_same(const Tensor& mpi, const Tensor& local, const Tensor& one, const std::string& w) {
  bool ok = test::compare(mpi, one).max_abs <= 4e-6;
  EXPECT_TRUE(ok) << w << ": max |Δ| " << test::compare(mpi, one).max_abs;
  const auto close = test::close_rel_l2(mpi, one, 1e-6, w);
  EXPECT_TRUE(close);
  const auto bits = test::bit_equal(mpi, local, w + " (mpi vs local)");
  EXPECT_TRUE(bits);
  ok = ok && close && bits;
  EXPECT_TRUE(test::mpi_all_true(ok)) << w;
}

TEST(MiniMaxH3Mpi, DecodeAndEncodeEqualOneDevice) {
  const int64_t T = 21;  // 4x1: 6 frames per device ≥ the decode's 5, the last one partial
  const Tensor z = test::random_normal({2, 8, T}, 91);
  const Tensor w = test::random_uniform({2, 1, 40 * 26 - 9}, 92, -0.5f, 0.5f);  // 26 latents
  const Tensor z_one = vae().run(z, run("1x1", Backend::local));
  Tensor logs_one;
  const Tensor m_one = vae().encode(w, run("1x1", Backend::local), &logs_one);
  for (const std::string& mesh : meshes()) {
    const Tensor y = vae().run(z, run(mesh, Backend::mpi));
    expect_same(y, vae().run(z, run(mesh, Backend::local)), z_one, "decode " + mesh);
    Tensor logs, logs_local;
    const Tensor m = vae().encode(w, run(mesh, Backend::mpi), &logs);
    const Tensor m_local = vae().encode(w, run(mesh, Backend::local), &logs_local);
    expect_same(m, m_local, m_one, "encode mean " + mesh);
    expect_same(logs, logs_local, logs_one, "encode logs " + mesh);
  }
}

TEST(MiniMaxH3Mpi, StreamPipelineEqualsOneShot) {
  const int world = mesh_detail::mpi_world_size();
  const Tensor z = test::random_normal({2, 8, 16}, 93);
  const Tensor ref = vae().run(z, run("1x1", Backend::local));
  StreamOptions so;
  so.mesh = "1x" + std::to_string(world);
  so.backend = Backend::mpi;
  so.threads = 1;
  AudioStream s = vae().stream(so);
  const bool last = mesh_detail::mpi_world_rank() == world - 1;
  EXPECT_EQ(s.returns_output(), last);
  std::vector<Tensor> parts;
  auto keep = [&](const Tensor& p) {
    if (p.dim(2) > 0) parts.push_back(p);
  };
  for (int64_t t = 0; t < 16; t += 3) keep(s.push(z.narrow(2, t, std::min<int64_t>(3, 16 - t))));
  keep(s.flush());
  const Tensor y = parts.empty() ? Tensor::empty({2, 1, 0}) : concat(parts, 2);
  bool ok = true;
  if (last) {
    ok = test::compare(y, ref).max_abs <= 4e-6;
    EXPECT_TRUE(ok) << test::compare(y, ref).max_abs;
  } else {
    EXPECT_EQ(y.dim(2), 0);
  }
  EXPECT_TRUE(test::mpi_all_true(ok));
}

}  // namespace
}  // namespace meshnn
