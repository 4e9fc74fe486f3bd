// Point-to-point hand-over (CclManager::send / recv) on the local backend: pipelines over every
// axis, order, the queue-depth bound, copies, failure propagation, timeout, validation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "mesh/communicator.h"
#include "meshnn/mesh/ccl.h"
#include "meshnn/mesh/mesh.h"
#include "support/golden.h"

namespace meshnn {
namespace {

using test::bit_equal;
using test::random_uniform;

MeshConfig cfg(int rows, int cols, double timeout = 60.0) {
  MeshConfig c;
  c.rows = rows;
  c.cols = cols;
  c.threads_per_device = 1;
  c.timeout_seconds = timeout;
  return c;
}

// Chunk k of a stream: a fresh random tensor of a shape and dtype that change with k.
Tensor chunk(int k) {
  const Shape s = k % 3 == 0   ? Shape{1, 5 + k, 7}
                  : k % 3 == 1 ? Shape{3, 4}
                               : Shape{2, 1, 3, k + 1};
  Tensor t = random_uniform(s, 100 + static_cast<uint64_t>(k));
  return k % 4 == 3 ? t.to(DType::bf16) : t;
}

// Stage `me` of an n-stage line along `axis`: receive from me−1 (stage 0 makes the chunk), pass
// it on to me+1; the last stage returns what arrived. Every stage checks the bytes.
void pipeline(Device& d, int axis, int chunks, std::vector<Tensor>* last) {
  const int n = axis == -1 ? d.mesh().size() : d.axis_size(axis);
  const int me = axis == -1 ? d.rank() : d.coord(axis);
  for (int k = 0; k < chunks; ++k) {
    const Tensor want = chunk(k);
    Tensor x = me == 0 ? want : d.ccl().recv(me - 1, axis);
    EXPECT_TRUE(bit_equal(x, want, "chunk " + std::to_string(k)));
    if (me + 1 < n)
      d.ccl().send(x, me + 1, axis);
    else if (last)
      last->push_back(x);
  }
}

TEST(P2p, PipelinesOnEveryAxis) {
  struct Case {
    int rows, cols, axis;
  };
  for (Case c : {Case{1, 2, 1}, Case{2, 1, 0}, Case{1, 4, 1}, Case{2, 2, 0}, Case{2, 2, 1},
                 Case{2, 2, -1}, Case{2, 4, 1}}) {
    std::vector<Tensor> got;
    run_spmd(cfg(c.rows, c.cols), [&](Device& d) {
      // On a 2-D mesh every group runs its own line; rank 0's group's last stage reports.
      const bool reporter = c.axis == -1  ? d.rank() == d.mesh().size() - 1
                            : c.axis == 1 ? d.coord(0) == 0 && d.coord(1) == c.cols - 1
                                          : d.coord(1) == 0 && d.coord(0) == c.rows - 1;
      pipeline(d, c.axis, 9, reporter ? &got : nullptr);
    });
    ASSERT_EQ(got.size(), 9u);
    for (int k = 0; k < 9; ++k) EXPECT_TRUE(bit_equal(got[k], chunk(k)));
  }
}

TEST(P2p, SendIsBufferedAndBoundedAtDepthTwo) {
  std::atomic<int> sent{0};
  run_spmd(cfg(1, 2), [&](Device& d) {
    if (d.rank() == 0) {
      Tensor x = random_uniform({4, 4}, 1);
      for (int k = 0; k < 3; ++k) {
        d.ccl().send(x, 1, 1);
        x.data<float>()[0] = 1000.f + k;  // the queued copy must not change
        sent = k + 1;
      }
    } else {
      // Two sends return without any recv (buffered) ...
      for (int i = 0; i < 1000 && sent.load() < 2; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      ASSERT_EQ(sent.load(), 2);
      // ... and the third waits for a recv (depth 2). A wrong bound would show sent == 3 here.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      EXPECT_EQ(sent.load(), 2);
      const Tensor a = d.ccl().recv(0, 1);
      const Tensor b = d.ccl().recv(0, 1);
      const Tensor c = d.ccl().recv(0, 1);
      EXPECT_EQ(a.data<float>()[0], random_uniform({4, 4}, 1).data<float>()[0]);
      EXPECT_EQ(b.data<float>()[0], 1000.f);
      EXPECT_EQ(c.data<float>()[0], 1001.f);
      EXPECT_EQ(sent.load(), 3);
    }
  });
  EXPECT_EQ(mesh_detail::kP2pDepth, 2);
}

TEST(P2p, BothDirectionsAndManyPeersOnTheWholeMesh) {
  run_spmd(cfg(2, 2), [&](Device& d) {
    // Everyone sends one tagged tensor to everyone else, then receives from everyone.
    const int n = d.mesh().size();
    for (int p = 0; p < n; ++p)
      if (p != d.rank())
        d.ccl().send(Tensor::from_vector<float>({float(d.rank() * 10 + p)}, {1}), p, -1);
    for (int p = 0; p < n; ++p)
      if (p != d.rank()) {
        const Tensor x = d.ccl().recv(p, -1);
        EXPECT_EQ(x.data<float>()[0], float(p * 10 + d.rank()));
      }
  });
}

TEST(P2p, FailedReceiverEndsABlockedSender) {
  std::atomic<bool> sender_got_comm_error{false};
  EXPECT_THROW(run_spmd(cfg(1, 2),
                        [&](Device& d) {
                          if (d.rank() == 1) throw std::runtime_error("stage 1 broke");
                          try {
                            for (int k = 0; k < 5; ++k) d.ccl().send(Tensor({8}), 1, 1);
                          } catch (const CommError& e) {
                            sender_got_comm_error = true;
                            const std::string m = e.what();
                            EXPECT_TRUE(m.find("stage 1 broke") != std::string::npos ||
                                        m.find("finished") != std::string::npos)
                                << m;
                            throw;
                          }
                        }),
               std::runtime_error);
  EXPECT_TRUE(sender_got_comm_error);
}

TEST(P2p, ReceiverWhosePeerFinishedGetsCommError) {
  try {
    run_spmd(cfg(1, 2), [&](Device& d) {
      if (d.rank() == 1) {
        d.ccl().recv(0, 1);  // the first message arrives
        d.ccl().recv(0, 1);  // nothing more will
      } else {
        d.ccl().send(Tensor({2}), 1, 1);
      }
    });
    FAIL() << "no error";
  } catch (const CommError& e) {
    EXPECT_NE(std::string(e.what()).find("finished its function"), std::string::npos) << e.what();
  }
}

TEST(P2p, SilentSenderHitsTheLivenessBound) {
  try {
    run_spmd(cfg(1, 2, 0.2), [&](Device& d) {
      if (d.rank() == 1)
        d.ccl().recv(0, 1);
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    });
    FAIL() << "no error";
  } catch (const CommError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("liveness timeout"), std::string::npos) << m;
    EXPECT_NE(m.find("device 0 (0, 0) is silent"), std::string::npos) << m;
  }
}

TEST(P2p, ValidationIsLocal) {
  run_spmd(cfg(1, 2), [&](Device& d) {
    const Tensor x({2});
    EXPECT_THROW(d.ccl().send(x, d.rank(), 1), InvalidArgument);   // to itself
    EXPECT_THROW(d.ccl().send(x, 2, 1), InvalidArgument);          // out of range
    EXPECT_THROW(d.ccl().send(x, 0, 0), InvalidArgument);          // axis 0 has extent 1
    EXPECT_THROW(d.ccl().recv(1 - d.rank(), 3), InvalidArgument);  // no such axis
    EXPECT_THROW(d.ccl().send(Tensor(), 1 - d.rank(), 1), InvalidArgument);
    // The mesh is still usable: nobody was left waiting.
    d.ccl().send(x, 1 - d.rank(), 1);
    EXPECT_EQ(d.ccl().recv(1 - d.rank(), 1).shape(), Shape{2});
  });
  run_spmd(cfg(1, 1), [&](Device& d) {
    EXPECT_THROW(d.ccl().send(Tensor({2}), 0, 1), InvalidArgument);
    EXPECT_THROW(d.ccl().recv(0, -1), InvalidArgument);
  });
}

}  // namespace
}  // namespace meshnn
