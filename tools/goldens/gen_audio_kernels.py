#!/usr/bin/python3
"""Goldens for the audio kernels: BigVGAN's kaiser-sinc filter, UpSample1d / LowPassFilter1d /
DownSample1d / Activation1d with Snake and SnakeBeta, and the LTX-2 hann-sinc ×3 upsampler.

Written from torch ops following the upstream definitions (docs/models.md)
(NVIDIA BigVGAN alias_free_activation/torch/{filter,resample,act}.py, activations.py).
Tensors are saved channels-last (B, T, C), as meshnn stores audio activations.

usage: /usr/bin/python3 tools/goldens/gen_audio_kernels.py tests/fixtures
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ltx_audio import filters  # noqa: E402


def kaiser_sinc_filter1d(cutoff, half_width, kernel_size):
    """NVIDIA BigVGAN's taps (torch.sinc), shared with the LTX reference in tools/ltx_audio."""
    return filters.kaiser_sinc_filter1d(cutoff, half_width, kernel_size, sinc='torch')


def hann_sinc_filter1d(ratio, rolloff=0.99, lowpass_filter_width=6):
    width = math.ceil(lowpass_filter_width / rolloff)
    k = 2 * width * ratio + 1
    t = (torch.arange(k, dtype=torch.float64) / ratio - width) * rolloff
    tc = t.clamp(-lowpass_filter_width, lowpass_filter_width)
    window = torch.cos(tc * math.pi / lowpass_filter_width / 2) ** 2
    h = torch.sinc(t) * window * rolloff / ratio
    return h.float().view(1, 1, k)


class LowPassFilter1d(torch.nn.Module):
    def __init__(self, cutoff=0.5, half_width=0.6, stride=1, kernel_size=12):
        super().__init__()
        self.even = kernel_size % 2 == 0
        self.pad_left = kernel_size // 2 - int(self.even)
        self.pad_right = kernel_size // 2
        self.stride = stride
        self.register_buffer("filter", kaiser_sinc_filter1d(cutoff, half_width, kernel_size))

    def forward(self, x):
        _, C, _ = x.shape
        x = F.pad(x, (self.pad_left, self.pad_right), mode="replicate")
        return F.conv1d(x, self.filter.expand(C, -1, -1), stride=self.stride, groups=C)


class UpSample1d(torch.nn.Module):
    def __init__(self, ratio=2, kernel_size=None, filt=None, pad=None, pad_left=None, pad_right=None):
        super().__init__()
        self.ratio = ratio
        self.kernel_size = int(6 * ratio // 2) * 2 if kernel_size is None else kernel_size
        self.stride = ratio
        self.pad = self.kernel_size // ratio - 1 if pad is None else pad
        self.pad_left = self.pad * self.stride + (self.kernel_size - self.stride) // 2 if pad_left is None else pad_left
        self.pad_right = (self.pad * self.stride + (self.kernel_size - self.stride + 1) // 2
                          if pad_right is None else pad_right)
        if filt is None:
            filt = kaiser_sinc_filter1d(cutoff=0.5 / ratio, half_width=0.6 / ratio, kernel_size=self.kernel_size)
        self.register_buffer("filter", filt)

    def forward(self, x):
        _, C, _ = x.shape
        x = F.pad(x, (self.pad, self.pad), mode="replicate")
        x = self.ratio * F.conv_transpose1d(x, self.filter.expand(C, -1, -1), stride=self.stride, groups=C)
        return x[..., self.pad_left:-self.pad_right]


class DownSample1d(torch.nn.Module):
    def __init__(self, ratio=2, kernel_size=None):
        super().__init__()
        ks = int(6 * ratio // 2) * 2 if kernel_size is None else kernel_size
        self.lowpass = LowPassFilter1d(cutoff=0.5 / ratio, half_width=0.6 / ratio, stride=ratio, kernel_size=ks)

    def forward(self, x):
        return self.lowpass(x)


class Snake(torch.nn.Module):
    def __init__(self, alpha, alpha_logscale):
        super().__init__()
        self.alpha = torch.nn.Parameter(alpha)
        self.alpha_logscale = alpha_logscale

    def forward(self, x):
        a = self.alpha.unsqueeze(0).unsqueeze(-1)
        if self.alpha_logscale:
            a = torch.exp(a)
        return x + (1.0 / (a + 1e-9)) * torch.pow(torch.sin(x * a), 2)


class SnakeBeta(torch.nn.Module):
    def __init__(self, alpha, beta, alpha_logscale):
        super().__init__()
        self.alpha = torch.nn.Parameter(alpha)
        self.beta = torch.nn.Parameter(beta)
        self.alpha_logscale = alpha_logscale

    def forward(self, x):
        a = self.alpha.unsqueeze(0).unsqueeze(-1)
        b = self.beta.unsqueeze(0).unsqueeze(-1)
        if self.alpha_logscale:
            a = torch.exp(a)
            b = torch.exp(b)
        return x + (1.0 / (b + 1e-9)) * torch.pow(torch.sin(x * a), 2)


class Activation1d(torch.nn.Module):
    def __init__(self, activation, up_ratio=2, down_ratio=2, up_kernel_size=12, down_kernel_size=12):
        super().__init__()
        self.act = activation
        self.upsample = UpSample1d(up_ratio, up_kernel_size)
        self.downsample = DownSample1d(down_ratio, down_kernel_size)

    def forward(self, x):
        return self.downsample(self.act(self.upsample(x)))


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
    g["filter.hann_x3"] = hann_sinc_filter1d(3).reshape(-1)

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
        act = SnakeBeta(a, b, True) if kind == "snakebeta" else Snake(a, False)
        m = Activation1d(act)
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
        g["lowpass_k11_s1.out"] = btc(LowPassFilter1d(0.25, 0.3, 1, 11)(x))
        g["down_r3_k18.x"] = btc(x[..., :30])
        g["down_r3_k18.out"] = btc(DownSample1d(3)(x[..., :30]))
        g["up_r3_k18.x"] = btc(x)
        g["up_r3_k18.out"] = btc(UpSample1d(3)(x))
        # LTX-2 BWE skip path: hann ×3, pad 7, crop 42 / 40
        xs = torch.randn(1, 2, 50)
        hann = UpSample1d(3, kernel_size=43, filt=hann_sinc_filter1d(3), pad=7, pad_left=42, pad_right=40)
        g["up_hann_x3.x"] = btc(xs)
        g["up_hann_x3.out"] = btc(hann(xs))
    st.save(os.path.join(out_dir, "audio_kernels.safetensors"), g,
            {"generator": "tools/goldens/gen_audio_kernels.py", "torch": torch.__version__})


if __name__ == "__main__":
    main()
