// Snake / SnakeBeta and the fused anti-aliased activation (BigVGAN Activation1d with r = 2, K =
// 12).
//
// Per channel c the activation is z = y + inv[c] · sin²(α[c] · y) with, at load time,
// Snake: inv = 1/(α + 1e-9); SnakeBeta: inv = 1/(β + 1e-9) (α, β already exponentiated if
// log-scale).
#pragma once

#include <cstdint>

namespace meshnn::kernels {

// Filter length and halo of the fused kernel: out[t] depends on x[t−5 … t+5].
constexpr int kAaTaps = 12;
constexpr int kAaHalo = 5;

// Which code path the fused activation runs: the widest the CPU has (AVX-512F, else AVX2 + FMA,
// else scalar), or a forced narrower one (tests). AVX-512 and AVX2 give bit-identical outputs
// (the same operations per lane); scalar differs by rounding (std::sin).
enum class ActIsa { best, avx2, scalar };

// Plain (not anti-aliased) snake over rows.
// x: (rows, C) f32, alpha/inv: (C,) → y: (rows, C) f32 (y may alias x).
void snake_rows_f32(const float* x, int64_t rows, int64_t C, const float* alpha, const float* inv,
                    float* y, bool force_scalar = false);

// Fused ×2 kaiser upsample → snake → ×2 kaiser downsample, never materialising the 2× signal.
// Processes (batch, time block of 160 outputs, 16-channel block) tasks in parallel (OpenMP); each
// task computes the 2× samples its outputs need into a small L1-resident buffer, applies snake, and
// downsamples from it.
//
// Row i of batch b is x + b·x_bstride + i·C; only rows i ∈ [lo, hi) are read and they define the
// sequence: X(i) = x[clamp(i, lo, hi − 1)] (the 1× replicate pad) and the 2× intermediate is
// clamped to [2·lo, 2·hi − 1] (the 2× replicate pad), exactly BigVGAN's edge rule when [lo, hi) is
// the whole sequence. A time shard passes lo/hi beyond its interior [0, n) where it holds real halo
// rows, so its outputs equal the unsharded ones bit for bit (same arithmetic per output). out rows
// [0, n) of batch b at out + b·out_bstride. Requires lo < hi. up_taps / down_taps: (12,) f32 (the
// upsampler's gain 2 is applied here, exactly).
void aa_snake_fused_f32(const float* x, int64_t x_bstride, int64_t B, int64_t C, int64_t lo,
                        int64_t hi, int64_t n, const float* up_taps, const float* down_taps,
                        const float* alpha, const float* inv, float* out, int64_t out_bstride,
                        ActIsa isa = ActIsa::best);

}  // namespace meshnn::kernels
