#!/usr/bin/python3
"""Goldens for the audio kernels: BigVGAN's kaiser-sinc filter, UpSample1d / LowPassFilter1d /
DownSample1d / Activation1d with Snake and SnakeBeta, and the LTX-2 hann-sinc ×3 upsampler.

The modules are tools/ltx_audio's (the one PyTorch reference of the audio models) with NVIDIA
BigVGAN's torch.sinc taps; they follow the upstream definitions (docs/models.md) (NVIDIA BigVGAN
alias_free_activation/torch/{filter,resample,act}.py, activations.py).
Tensors are saved channels-last (B, T, C), as meshnn stores audio activations.

usage: /usr/bin/python3 tools/goldens/gen_audio_kernels.py tests/fixtures
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ltx_audio import filters, model as M  # noqa: E402

# NVIDIA BigVGAN's taps use torch.sinc (ltx-core's its own sinc); the kernels are checked against
# BigVGAN's definitions.
SINC = 'torch'


def kaiser_sinc_filter1d(cutoff, half_width, kernel_size):
    return filters.kaiser_sinc_filter1d(cutoff, half_width, kernel_size, sinc=SINC)


def snake(kind, alpha, beta, logscale):
    """ltx_audio's Snake / SnakeBeta over len(alpha) channels with the given parameters."""
    act = M.SnakeBeta(alpha.numel(), logscale) if kind == 'snakebeta' else M.Snake(alpha.numel(), logscale)
    with torch.no_grad():
        act.alpha.copy_(alpha)
        if beta is not None:
            act.beta.copy_(beta)
    return act


def btc(x_bct):
    return x_bct.transpose(1, 2).contiguous()


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(1234)
    g = {}
    # ---- filter design
    for name, (c, hw, k) in {"kaiser_12": (0.25, 0.3, 12), "kaiser_11": (0.25, 0.3, 11),
                             "kaiser_18": (0.5 / 3, 0.6 / 3, 18), "kaiser_7": (0.4, 0.05, 7),
                             "kaiser_4": (0.2, 0.2, 4)}.items():
        g["filter." + name] = kaiser_sinc_filter1d(c, hw, k).reshape(k)
    g["filter.hann_x3"] = filters.hann_sinc_resampler_taps(3)[0].reshape(-1)

    # ---- activations: (B, C, T) in torch, saved as (B, T, C)
    cases = [("aa_sb_c24_t37", 2, 24, 37, "snakebeta", True),
             ("aa_sb_c100_t9", 1, 100, 9, "snakebeta", True),   # T < filter length
             ("aa_sb_c1_t3", 1, 1, 3, "snakebeta", True),
             ("aa_sb_c512_t20", 1, 512, 20, "snakebeta", True),
             ("aa_snake_c24_t33", 1, 24, 33, "snake", False)]   # linear-scale Snake
    for name, B, C, T, kind, logscale in cases:
        x = torch.randn(B, C, T) * 2.0
        if logscale:
            a = torch.randn(C) * 0.5
            b = torch.randn(C) * 0.5
        else:
            a = torch.rand(C) * 1.5 + 0.2
            b = None
        m = M.Activation1d(snake(kind, a, b, logscale), sinc=SINC)
        with torch.no_grad():
            up = m.upsample(x)
            z = m.act(up)
            y = m.downsample(z)
        g[name + ".x"] = btc(x)
        g[name + ".alpha"] = a
        if b is not None:
            g[name + ".beta"] = b
        g[name + ".up"] = btc(up)
        g[name + ".act"] = btc(z)
        g[name + ".out"] = btc(y)

    # ---- resamplers on their own
    x = torch.randn(2, 24, 31)
    with torch.no_grad():
        g["lowpass_k11_s1.x"] = btc(x)
        g["lowpass_k11_s1.out"] = btc(M.LowPassFilter1d(0.25, 0.3, 1, 11, sinc=SINC)(x))
        g["down_r3_k18.x"] = btc(x[..., :30])
        g["down_r3_k18.out"] = btc(M.DownSample1d(3, sinc=SINC)(x[..., :30]))
        g["up_r3_k18.x"] = btc(x)
        g["up_r3_k18.out"] = btc(M.UpSample1d(3, sinc=SINC)(x))
        # LTX-2 BWE skip path: hann ×3, pad 7, crop 42 / 40
        xs = torch.randn(1, 2, 50)
        hann = M.UpSample1d(3, window_type='hann')
        g["up_hann_x3.x"] = btc(xs)
        g["up_hann_x3.out"] = btc(hann(xs))
    st.save(os.path.join(out_dir, "audio_kernels.safetensors"), g,
            {"generator": "tools/goldens/gen_audio_kernels.py", "torch": torch.__version__})


if __name__ == "__main__":
    main()
