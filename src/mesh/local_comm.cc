#include "mesh/local_comm.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "meshnn/core/bf16.h"
#include "meshnn/core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MESHNN_PAUSE() _mm_pause()
#else
#define MESHNN_PAUSE() std::this_thread::yield()
#endif

namespace meshnn::mesh_detail {

void bulk_copy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  if (n >= kStreamCopyBytes) {
    auto* d = static_cast<uint8_t*>(dst);
    const auto* s = static_cast<const uint8_t*>(src);
    const size_t head = (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16;
    std::memcpy(d, s, head);
    d += head, s += head, n -= head;
    const size_t body = n / 64 * 64;
    for (size_t i = 0; i < body; i += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
    }
    std::memcpy(d + body, s + body, n - body);
    _mm_sfence();
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

void copy_region(const void* src, void* dst, const Region& s, const Region& d) {
  const auto* sp = static_cast<const uint8_t*>(src) + s.offset;
  auto* dp = static_cast<uint8_t*>(dst) + d.offset;
  if (s.count == 1) {
    bulk_copy(dp, sp, static_cast<size_t>(s.block));
    return;
  }
  for (int64_t i = 0; i < s.count; ++i)
    std::memcpy(dp + i * d.stride, sp + i * s.stride, static_cast<size_t>(s.block));
}

// ---- barrier ------------------------------------------------------------------------------

GroupBarrier::GroupBarrier(int n) : n_(n), seen_(std::make_unique<std::atomic<uint64_t>[]>(n)) {
  for (int i = 0; i < n; ++i) seen_[i].store(0);
}

void GroupBarrier::arrive_and_wait(LocalMeshState& st, const std::vector<int>& members, int me,
                                   const char* what, bool after_copy) {
  if (!after_copy && st.aborted()) st.throw_abort(what);
  const uint64_t g = gen_.load(std::memory_order_acquire);
  seen_[me].store(g + 1, std::memory_order_release);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
    arrived_.store(0, std::memory_order_relaxed);
    gen_.store(g + 1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lk(m_);
      cv_.notify_all();
    }
    return;
  }
  // Spin briefly (a peer is usually microseconds away), then sleep: with more devices than cores
  // a spinning waiter would steal the core of the device it waits for.
  for (int i = 0; i < 4000; ++i) {
    if (gen_.load(std::memory_order_acquire) != g) return;
    MESHNN_PAUSE();
  }
  for (int i = 0; i < 50; ++i) {
    if (gen_.load(std::memory_order_acquire) != g) return;
    std::this_thread::yield();
  }
  using clock = std::chrono::steady_clock;
  const double timeout = st.timeout_seconds();
  const auto start = clock::now();
  std::unique_lock<std::mutex> lk(m_);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  struct Leave {
    std::atomic<int>& s;
    ~Leave() { s.fetch_sub(1, std::memory_order_seq_cst); }
  } leave{sleepers_};
  for (;;) {
    if (gen_.load(std::memory_order_seq_cst) != g) return;
    if (!after_copy && st.aborted()) st.throw_abort(what);
    // A member that already returned from its function will never arrive: its program made
    // fewer collective calls than ours. (Checked before re-reading gen_, see below.)
    for (int m : members) {
      if (after_copy) break;  // every member arrives (see local_comm.h)
      if (st.finished(m) && gen_.load(std::memory_order_seq_cst) == g) {
        const std::string msg =
            detail::concat("device ", m, " finished its function while others wait in ", what,
                           " (devices made different collective calls)");
        lk.unlock();
        st.abort(m, std::make_exception_ptr(CommError(msg)), msg);
        st.throw_abort(what);
      }
    }
    if (timeout > 0 && std::chrono::duration<double>(clock::now() - start).count() > timeout) {
      std::string silent;
      for (size_t i = 0; i < members.size(); ++i)
        if (seen_[i].load(std::memory_order_acquire) != g + 1) {
          const int m = members[i];
          silent += detail::concat(silent.empty() ? "" : ", ", m, " (", st.mesh().coord(m, 0), ", ",
                                   st.mesh().coord(m, 1), ")");
        }
      if (gen_.load(std::memory_order_seq_cst) != g) return;  // completed meanwhile
      const std::string msg = detail::concat(
          "liveness timeout, no progress for ", timeout, " s in ", what, ": device(s) ",
          silent.empty() ? std::string("?") : silent,
          " did not arrive (silent; the liveness bound is MeshConfig::timeout_seconds or "
          "MESHNN_COMM_TIMEOUT)");
      lk.unlock();
      st.abort(-1, std::make_exception_ptr(CommError(msg)), msg);
      st.throw_abort(what);
    }
    cv_.wait_for(lk, std::chrono::milliseconds(20));
  }
}

void GroupBarrier::wake_all() {
  std::lock_guard<std::mutex> lk(m_);
  cv_.notify_all();
}

LocalGroup::LocalGroup(std::vector<int> members_in)
    : members(std::move(members_in)),
      barrier(static_cast<int>(members.size())),
      p2p(std::make_unique<P2pChannel[]>(members.size() * members.size())) {
  for (int p = 0; p < 2; ++p) {
    descs[p].resize(members.size());
    ptrs[p].resize(members.size());
  }
}

// ---- mesh state ---------------------------------------------------------------------------

LocalMeshState::LocalMeshState(const Mesh& mesh, double timeout_seconds)
    : mesh_(mesh), timeout_(timeout_seconds) {
  finished_ = std::make_unique<std::atomic<bool>[]>(mesh.size());
  for (int i = 0; i < mesh.size(); ++i) finished_[i].store(false);
  for (int c = 0; c < mesh.cols(); ++c)
    axis0_.push_back(std::make_unique<LocalGroup>(mesh.group(mesh.rank_of(0, c), 0)));
  for (int r = 0; r < mesh.rows(); ++r)
    axis1_.push_back(std::make_unique<LocalGroup>(mesh.group(mesh.rank_of(r, 0), 1)));
  std::vector<int> all(mesh.size());
  for (int i = 0; i < mesh.size(); ++i) all[i] = i;
  world_ = std::make_unique<LocalGroup>(std::move(all));
}

LocalGroup& LocalMeshState::group_of(int rank, int axis) {
  if (axis == 0) return *axis0_[mesh_.coord(rank, 1)];
  if (axis == 1) return *axis1_[mesh_.coord(rank, 0)];
  return *world_;
}

void LocalMeshState::abort(int device, std::exception_ptr error, const std::string& message) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (aborted_.load()) return;
    failed_device_ = device;
    failed_message_ = message;
    first_error_ = std::move(error);
    aborted_.store(true, std::memory_order_release);
  }
  for (auto& g : axis0_) g->barrier.wake_all();
  for (auto& g : axis1_) g->barrier.wake_all();
  world_->barrier.wake_all();
}

void LocalMeshState::throw_abort(const char* what) const {
  std::lock_guard<std::mutex> lk(mu_);
  if (failed_device_ >= 0) {
    throw CommError(detail::concat(what, ": device ", failed_device_, " (",
                                   mesh_.coord(failed_device_, 0), ", ",
                                   mesh_.coord(failed_device_, 1), ") failed: ", failed_message_));
  }
  throw CommError(detail::concat(what, ": ", failed_message_));
}

std::exception_ptr LocalMeshState::first_error() const {
  std::lock_guard<std::mutex> lk(mu_);
  return first_error_;
}

// ---- communicator -------------------------------------------------------------------------

namespace {

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalMeshState> st, int rank, int axis)
      : LocalCommunicator(st, rank, st->group_of(rank, axis),
                          axis == 2 ? "collective on the whole mesh"
                                    : detail::concat("collective on mesh axis ", axis)) {}
  LocalCommunicator(std::shared_ptr<LocalMeshState> st, int rank, LocalGroup& group,
                    std::string what)
      : st_(std::move(st)), group_(group), rank_(rank), what_(std::move(what)) {
    for (size_t i = 0; i < group_.members.size(); ++i)
      if (group_.members[i] == rank) index_ = static_cast<int>(i);
  }

  int size() const override { return static_cast<int>(group_.members.size()); }
  int index() const override { return index_; }

  std::vector<OpDesc> exchange(const OpDesc& desc, const void* data) override {
    const int p = parity_;
    parity_ ^= 1;
    group_.descs[p][index_] = desc;
    group_.ptrs[p][index_] = data;
    wait();
    cur_ = p;
    return group_.descs[p];
  }

  void barrier() override { wait(); }

  void all_gather(const void* src, void* dst, int64_t outer, int64_t chunk) override {
    const int n = size();
    auto* d = static_cast<uint8_t*>(dst);
    // Pull every member's block straight from its tensor: no staging copy.
    for (int k0 = 0; k0 < n; ++k0) {
      const int k = (index_ + k0) % n;  // start with our own block, spread the peers' reads
      const auto* s = static_cast<const uint8_t*>(k == index_ ? src : group_.ptrs[cur_][k]);
      if (outer == 1) {
        bulk_copy(d + k * chunk, s, static_cast<size_t>(chunk));
      } else {
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(d + (o * n + k) * chunk, s + o * chunk, static_cast<size_t>(chunk));
      }
    }
    copied();
  }

  void reduce_scatter(const void* src, void* dst, DType dtype, int64_t outer,
                      int64_t chunk) override {
    const int n = size();
    const int64_t row = static_cast<int64_t>(n) * chunk;
    std::vector<const void*> in(n);
    for (int k = 0; k < n; ++k) in[k] = k == index_ ? src : group_.ptrs[cur_][k];
    if (dtype == DType::f32) {
      float* out = static_cast<float*>(dst);
      for (int64_t o = 0; o < outer; ++o) {
        float* y = out + o * chunk;
        const int64_t off = o * row + index_ * chunk;
        std::memcpy(y, static_cast<const float*>(in[0]) + off, chunk * sizeof(float));
        for (int k = 1; k < n; ++k) {
          const float* x = static_cast<const float*>(in[k]) + off;
          for (int64_t e = 0; e < chunk; ++e) y[e] += x[e];
        }
      }
    } else {
      bf16* out = static_cast<bf16*>(dst);
      std::vector<float> acc(static_cast<size_t>(chunk));
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t off = o * row + index_ * chunk;
        const bf16* x0 = static_cast<const bf16*>(in[0]) + off;
        for (int64_t e = 0; e < chunk; ++e) acc[e] = to_f32(x0[e]);
        for (int k = 1; k < n; ++k) {
          const bf16* x = static_cast<const bf16*>(in[k]) + off;
          for (int64_t e = 0; e < chunk; ++e) acc[e] += to_f32(x[e]);
        }
        bf16* y = out + o * chunk;
        for (int64_t e = 0; e < chunk; ++e) y[e] = to_bf16(acc[e]);
      }
    }
    copied();
  }

  void send(const Tensor& t, int to) override {
    local_p2p_send(*st_, group_, index_, to, t, what_);
  }
  Tensor recv(int from) override { return local_p2p_recv(*st_, group_, index_, from, what_); }

  void halo(void* buf, const Region& send_prev, const Region& send_next, const Region& recv_prev,
            const Region& recv_next) override {
    const int n = size();
    if (index_ > 0 && !recv_prev.empty())
      copy_region(group_.ptrs[cur_][index_ - 1], buf, send_next, recv_prev);
    if (index_ < n - 1 && !recv_next.empty())
      copy_region(group_.ptrs[cur_][index_ + 1], buf, send_prev, recv_next);
    copied();
  }

 private:
  void wait() { group_.barrier.arrive_and_wait(*st_, group_.members, index_, what_.c_str()); }
  // The end of a collective that read the peers' buffers in place (GroupBarrier: after_copy).
  void copied() {
    group_.barrier.arrive_and_wait(*st_, group_.members, index_, what_.c_str(), true);
  }

  std::shared_ptr<LocalMeshState> st_;
  LocalGroup& group_;
  int rank_ = 0;
  int index_ = 0;
  int parity_ = 0;
  int cur_ = 0;
  std::string what_;
};

}  // namespace

std::shared_ptr<Communicator> make_local_comm(std::shared_ptr<LocalMeshState> state, int rank,
                                              int axis) {
  return std::make_shared<LocalCommunicator>(std::move(state), rank, axis);
}

}  // namespace meshnn::mesh_detail
