// The Winograd 1-D transform matrices (kernels/winograd1d.h): built in float64 from the
// interpolation points, and the default tile per kernel size and precision.
#include <cmath>
#include <vector>

#include "kernels/winograd1d.h"
#include "meshnn/core/error.h"

namespace meshnn::kernels {

namespace {

constexpr int kMaxAlpha = 12;
// Interpolation points in the order they are taken: small magnitudes and their reciprocals keep
// the Vandermonde system well conditioned (the powers stay near 1), ∞ is always added last.
constexpr double kPoints[] = {0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.25, -0.25, 4.0, -4.0};

// Inverse of an n × n row-major matrix (Gauss-Jordan, partial pivoting, float64).
std::vector<double> invert(std::vector<double> a, int n) {
  std::vector<double> inv(static_cast<size_t>(n * n), 0.0);
  for (int i = 0; i < n; ++i) inv[i * n + i] = 1.0;
  for (int col = 0; col < n; ++col) {
    int piv = col;
    for (int r = col + 1; r < n; ++r)
      if (std::abs(a[r * n + col]) > std::abs(a[piv * n + col])) piv = r;
    MESHNN_CHECK(a[piv * n + col] != 0.0, "winograd: singular interpolation matrix");
    for (int c = 0; c < n; ++c) {
      std::swap(a[col * n + c], a[piv * n + c]);
      std::swap(inv[col * n + c], inv[piv * n + c]);
    }
    const double p = a[col * n + col];
    for (int c = 0; c < n; ++c) a[col * n + c] /= p, inv[col * n + c] /= p;
    for (int r = 0; r < n; ++r) {
      if (r == col || a[r * n + col] == 0.0) continue;
      const double f = a[r * n + col];
      for (int c = 0; c < n; ++c)
        a[r * n + c] -= f * a[col * n + c], inv[r * n + c] -= f * inv[col * n + c];
    }
  }
  return inv;
}

}  // namespace

WinogradMatrices winograd_matrices(int m, int r) {
  const int a = m + r - 1;
  MESHNN_CHECK_AS(InvalidArgument, m >= 1 && r >= 1 && a >= 2 && a <= kMaxAlpha,
                  "winograd: unsupported tile F(", m, ", ", r, ") (alpha must be 2..", kMaxAlpha,
                  ")");
  WinogradMatrices w;
  w.m = m, w.r = r, w.alpha = a;
  const int nf = a - 1;  // finite points; the last row is the point at infinity
  w.points.assign(kPoints, kPoints + nf);
  std::vector<double> V(static_cast<size_t>(a * a), 0.0);
  for (int i = 0; i < nf; ++i)
    for (int c = 0; c < a; ++c) V[i * a + c] = std::pow(w.points[i], c);
  V[nf * a + (a - 1)] = 1.0;
  // Linear convolution s = h * x (h: r taps, x: m values) is s = V⁻¹[(G h) ⊙ (E x)]; its
  // transpose (the correlation a conv layer computes) is y = Eᵀ[(G h) ⊙ (V⁻ᵀ d)].
  const std::vector<double> vinv = invert(V, a);
  w.bt.resize(static_cast<size_t>(a * a));
  for (int xi = 0; xi < a; ++xi)
    for (int j = 0; j < a; ++j) w.bt[xi * a + j] = vinv[j * a + xi];
  w.g.assign(static_cast<size_t>(a * r), 0.0);
  w.at.assign(static_cast<size_t>(m * a), 0.0);
  for (int xi = 0; xi < nf; ++xi) {
    for (int j = 0; j < r; ++j) w.g[xi * r + j] = std::pow(w.points[xi], j);
    for (int u = 0; u < m; ++u) w.at[u * a + xi] = std::pow(w.points[xi], u);
  }
  w.g[nf * r + (r - 1)] = 1.0;
  w.at[(m - 1) * a + nf] = 1.0;
  return w;
}

WinogradTile default_winograd_tile(int64_t k, WinogradPrecision p) {
  // bf16 operands: the operand rounding (2.2e-3 relative L2 for the direct algorithm) grows by
  // the tile's κ (winograd1d_test.cc Bf16WithinDerivedBound): F(6,3) 4.5, F(4,4) 4.0, F(3,3)
  // 2.45. F(3,3) (α = 5, segmented for K > 3: K = 3 1.8×, K = 7 1.4×, K = 11 1.65× fewer
  // multiplies) keeps a layer within the bf16 bound of docs/precision.md (7e-3).
  if (p == WinogradPrecision::bf16) return {3, 3};
  // Measured relative L2 errors at C = 768 (winograd1d_test.cc, docs/precision.md): F(6,3)
  // 1.6e-6, F(4,4) 1.4e-6, within the 3e-6 contract; every α ≥ 9 tile measured above it
  // (F(5,5) 5e-6, F(4,7) 1.3e-5, F(6,6) 1.3e-5), so α ≤ 8 and long kernels go segmented.
  if (k == 3) return {6, 3};  // F(6,3): α = 8, 2.25× fewer multiplies
  return {4, 4};              // segmented F(4,4): α = 7; K = 7 → 2×, K = 11 → 2.1×
}

}  // namespace meshnn::kernels
