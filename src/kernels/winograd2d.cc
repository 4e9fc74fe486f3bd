#include "kernels/winograd2d.h"

#include <immintrin.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>

#include "kernels/filter_cache.h"
#include "meshnn/core/error.h"
#include "meshnn/core/tensor.h"

namespace meshnn::kernels {
namespace {

// Target bytes of one block's transformed inputs + products (as in the 1-D kernel).
constexpr int64_t kBlockBytes = 1024 * 1024;

// Tiles per block: the block's 16 transformed inputs + products stay near kBlockBytes.
int64_t block_tiles(int64_t c_in, int64_t c_out) {
  const int64_t per_tile = 16 * (c_in + c_out) * int64_t{sizeof(float)};
  return std::clamp<int64_t>(kBlockBytes / per_tile, 64, 256);
}

__attribute__((target("avx2,fma"))) inline __m256i lane_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__attribute__((target("avx2,fma"))) inline __m256 load(const float* p, int64_t n, __m256i mask) {
  if (p == nullptr) return _mm256_setzero_ps();
  return n == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}
__attribute__((target("avx2,fma"))) inline void store(float* p, __m256 v, int64_t n, __m256i mask) {
  if (n == 8)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, mask, v);
}

// One input tile: the 4×4 patch with top-left input (r0, c0) (zeros outside the image) →
// v[ξ·vstride + c] for ξ = 4·i + j, V = Bᵀ·d·B with
// Bᵀ = [[1, 0, −1, 0], [0, 1, 1, 0], [0, −1, 1, 0], [0, 1, 0, −1]].
__attribute__((target("avx2,fma"))) void input_tile(const float* x, int64_t H, int64_t W,
                                                    int64_t r0, int64_t c0, int64_t C, float* v,
                                                    int64_t vstride) {
  const float* px[4][4];
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      const int64_t r = r0 + a, c = c0 + b;
      px[a][b] = r >= 0 && r < H && c >= 0 && c < W ? x + (r * W + c) * C : nullptr;
    }
  for (int64_t ch = 0; ch < C; ch += 8) {
    const int64_t n = std::min<int64_t>(8, C - ch);
    const __m256i mask = lane_mask(n);
    __m256 d[4][4], t[4][4];
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) d[a][b] = load(px[a][b] ? px[a][b] + ch : nullptr, n, mask);
    for (int b = 0; b < 4; ++b) {  // t = Bᵀ·d (rows)
      t[0][b] = _mm256_sub_ps(d[0][b], d[2][b]);
      t[1][b] = _mm256_add_ps(d[1][b], d[2][b]);
      t[2][b] = _mm256_sub_ps(d[2][b], d[1][b]);
      t[3][b] = _mm256_sub_ps(d[1][b], d[3][b]);
    }
    for (int a = 0; a < 4; ++a) {  // V = t·B (columns)
      float* row = v + (4 * a) * vstride + ch;
      store(row, _mm256_sub_ps(t[a][0], t[a][2]), n, mask);
      store(row + vstride, _mm256_add_ps(t[a][1], t[a][2]), n, mask);
      store(row + 2 * vstride, _mm256_sub_ps(t[a][2], t[a][1]), n, mask);
      store(row + 3 * vstride, _mm256_sub_ps(t[a][1], t[a][3]), n, mask);
    }
  }
}

// One output tile: products m[ξ·mstride + o] → the 2×2 outputs at (i0, j0) (those inside
// H_out × W_out), Y = Aᵀ·M·A + bias with Aᵀ = [[1, 1, 1, 0], [0, 1, −1, −1]].
__attribute__((target("avx2,fma"))) void output_tile(const float* m, int64_t mstride,
                                                     const float* bias, int64_t C, float* y,
                                                     int64_t ystride, int64_t Ho, int64_t Wo,
                                                     int64_t i0, int64_t j0, bool accumulate) {
  const int rows = i0 + 1 < Ho ? 2 : 1, cols = j0 + 1 < Wo ? 2 : 1;
  for (int64_t o = 0; o < C; o += 8) {
    const int64_t n = std::min<int64_t>(8, C - o);
    const __m256i mask = lane_mask(n);
    __m256 p[16];
    for (int xi = 0; xi < 16; ++xi) p[xi] = load(m + xi * mstride + o, n, mask);
    __m256 s[2][4];
    for (int b = 0; b < 4; ++b) {  // s = Aᵀ·M (rows)
      s[0][b] = _mm256_add_ps(_mm256_add_ps(p[b], p[4 + b]), p[8 + b]);
      s[1][b] = _mm256_sub_ps(_mm256_sub_ps(p[4 + b], p[8 + b]), p[12 + b]);
    }
    const __m256 bv = load(bias + o, n, mask);
    for (int u = 0; u < rows; ++u) {
      __m256 out[2];
      out[0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[u][0], s[u][1]), s[u][2]), bv);
      out[1] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s[u][1], s[u][2]), s[u][3]), bv);
      for (int w = 0; w < cols; ++w) {
        float* yp = y + ((i0 + u) * Wo + j0 + w) * ystride + o;
        __m256 r = out[w];
        if (accumulate) r = _mm256_add_ps(r, load(yp, n, mask));
        store(yp, r, n, mask);
      }
    }
  }
}

}  // namespace

Winograd2d::Winograd2d(const FilterWeights& weights, const float* bias, int64_t c_out, int64_t c_in,
                       WinogradPrecision precision, WinogradIsa isa)
    : c_in_(c_in), c_out_(c_out), precision_(precision) {
  MESHNN_CHECK_AS(InvalidArgument, c_out > 0 && c_in > 0,
                  "winograd conv2d: bad channels C_out=", c_out, " C_in=", c_in);
  // U[4i + j][c][o] = (G·g·Gᵀ)[i][j] = Σ_{a,b} G[i][a]·G[j][b]·g[a][b] with
  // G = [[1, 0, 0], [½, ½, ½], [½, −½, ½], [0, 0, 1]]: the 1-D transform over the 9 taps with the
  // 16 × 9 matrix G ⊗ G (powers of two: the float64 products are exact, one rounding to f32).
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  double kron[16 * 9];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) kron[(4 * i + j) * 9 + 3 * a + b] = G[i][a] * G[j][b];
  const bool bf16 = precision == WinogradPrecision::bf16;
  // The packed GEMM only for native bf16: its f32 form measured slower than dnnl_sgemm here
  // (docs/benchmarks.md), so f32 and the bf16 emulation keep dnnl_sgemm.
  native_bf16_ = bf16 && isa == WinogradIsa::automatic && packed_gemm_available(GemmType::bf16);
  packed_ = native_bf16_;
  filters_ = winograd_filters(
      16, c_in, c_out, precision, packed_,
      [&](float* u) { transform_filters(kron, 16, 9, 9, 1, weights.values(), c_out, c_in, u); },
      [&] {
        FilterKey key("winograd2d");
        key.add(c_in).add(c_out).add(static_cast<int64_t>(bf16) + static_cast<int64_t>(packed_));
        weights.add_to(key, static_cast<size_t>(c_out * c_in * 9));
        return key.value();
      },
      [&] {
        return detail::concat("winograd2d F(2x2,3x3) C_in ", c_in, " C_out ", c_out,
                              packed_ ? " bf16 packed"
                              : bf16  ? " bf16 emulated"
                                      : " f32");
      });
  bias_.assign(static_cast<size_t>(c_out), 0.f);
  if (bias) std::copy(bias, bias + c_out, bias_.begin());
  // The block scratch of run(), ready before the first call.
  const int64_t nb = block_tiles(c_in, c_out);
  reserve_winograd_scratch(static_cast<size_t>(16 * nb * (c_in + c_out)),
                           native_bf16_ ? static_cast<size_t>(16 * nb * c_in) : 0);
}

const char* Winograd2d::gemm_label() const {
  if (native_bf16_) return "packed-bf16";
  const bool emu = precision_ == WinogradPrecision::bf16;
  if (packed_) return emu ? "packed-f32-bf16emu" : "packed-f32";
  return emu ? "sgemm-bf16emu" : "sgemm";
}

void Winograd2d::run(const float* x, int64_t H, int64_t W, int64_t pad_h, int64_t pad_w, float* y,
                     int64_t H_out, int64_t W_out, bool accumulate) const {
  MESHNN_CHECK(winograd1d_available(), "winograd conv2d needs AVX2 and FMA");
  if (H_out <= 0 || W_out <= 0) return;
  const int64_t Ci = c_in_, Co = c_out_;
  const int64_t th = (H_out + 1) / 2, tw = (W_out + 1) / 2, n_t = th * tw;
  // Blocks of nb tiles (row-major over the tile grid) times column chunks when the blocks are
  // fewer than the threads (Winograd1d::run), each item run whole by one thread: input
  // transform → 16 single-threaded GEMMs → output transform, in thread-local scratch.
  const int64_t nb = block_tiles(Ci, Co);
  const int64_t n_blocks = (n_t + nb - 1) / nb;
  const int64_t chunks = winograd_column_chunks(n_blocks, Co, omp_get_max_threads());
  const int64_t chunk_cols = ((Co + 31) / 32 + chunks - 1) / chunks * 32;
  const int64_t n_items = n_blocks * chunks;
  const bool bf16 = precision_ == WinogradPrecision::bf16;
  std::atomic<int> failed{0};
#pragma omp parallel
  {
    WinogradScratch& sc = winograd_scratch();
    std::vector<float>& buf = sc.f32;
    std::vector<uint16_t>& buf16 = sc.bf16;
    const int64_t vstride = nb * Ci, mstride = nb * Co;
    if (buf.size() < static_cast<size_t>(16 * (vstride + mstride)))
      buf.resize(static_cast<size_t>(16 * (vstride + mstride)));
    if (native_bf16_ && buf16.size() < static_cast<size_t>(16 * vstride))
      buf16.resize(static_cast<size_t>(16 * vstride));
    float* v = buf.data();
    float* mo = v + 16 * vstride;
    int64_t have = -1;
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < n_items; ++item) {
      const int64_t blk = item / chunks, ch = item % chunks;
      const int64_t t0 = blk * nb, n = std::min(nb, n_t - t0);
      const int64_t o0 = ch * chunk_cols, o1 = std::min(Co, o0 + chunk_cols);
      if (o0 >= o1) continue;
      if (have != blk) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t ti = (t0 + j) / tw, tj = (t0 + j) % tw;
          input_tile(x, H, W, 2 * ti - pad_h, 2 * tj - pad_w, Ci, v + j * Ci, vstride);
        }
        if (bf16)
          for (int xi = 0; xi < 16; ++xi) {
            if (native_bf16_)
              convert_to_bf16(v + xi * vstride, n * Ci, buf16.data() + xi * vstride);
            else
              round_to_bf16_inplace(v + xi * vstride, n * Ci);
          }
        have = blk;
      }
      for (int xi = 0; xi < 16; ++xi) {
        if (packed_) {
          const void* av = native_bf16_ ? static_cast<const void*>(buf16.data() + xi * vstride)
                                        : static_cast<const void*>(v + xi * vstride);
          packed_gemm(filters_.pk[static_cast<size_t>(xi)], n, av, Ci, mo + xi * mstride, Co, o0,
                      o1, false);
          continue;
        }
        const dnnl_status_t st =
            dnnl_sgemm('N', 'N', n, o1 - o0, Ci, 1.f, v + xi * vstride, Ci,
                       filters_.u.data() + xi * Ci * Co + o0, Co, 0.f, mo + xi * mstride + o0, Co);
        if (st != dnnl_success) failed.store(static_cast<int>(st), std::memory_order_relaxed);
      }
      for (int64_t j = 0; j < n; ++j) {
        const int64_t ti = (t0 + j) / tw, tj = (t0 + j) % tw;
        output_tile(mo + j * Co + o0, mstride, bias_.data() + o0, o1 - o0, y + o0, Co, H_out, W_out,
                    2 * ti, 2 * tj, accumulate);
      }
    }
  }
  MESHNN_CHECK_AS(BackendError, failed.load() == 0, "winograd conv2d: oneDNN sgemm K=", Ci,
                  " N=", Co, " failed (status ", failed.load(), ")");
}

}  // namespace meshnn::kernels
