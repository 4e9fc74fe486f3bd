// A float64 radix-2 FFT, the one meshnn uses for its STFTs (the BigVGAN mel front end) and for the
// spectral comparisons of `meshnn verify` / `meshnn-bench precision`.
#pragma once

#include <complex>
#include <vector>

namespace meshnn::ops {

// In place; a.size() a power of two. Twiddles from cos/sin directly (not by repeated
// multiplication) to keep full double precision.
void fft_pow2(std::vector<std::complex<double>>& a);

}  // namespace meshnn::ops
