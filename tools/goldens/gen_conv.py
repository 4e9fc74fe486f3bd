#!/usr/bin/python3
"""Goldens for the conv layers: torch.nn.Conv1d / Conv2d / ConvTranspose1d with the options the
LTX-2 / BigVGAN / MiniMax call sites use, including weight_norm-parametrised modules saved with
their weight_g / weight_v keys and CausalConv2d-style wrappers (inner `.conv.` keys).

Every case <name> stores  <name>.x (input, channels-last), <name>.y (torch output, channels-last)
and the module's state dict under <name>.mod.*. The C++ side (tests/layers/conv_golden_test.cc)
rebuilds each layer from the same configuration table — keep the two in sync.

usage: /usr/bin/python3 tools/goldens/gen_conv.py tests/fixtures
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.utils import weight_norm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st  # noqa: E402


def conv1d_case(out, name, gen, B, T, ci, co, k, stride=1, dilation=1, padding=None,
                causal=False, bias=True, wn=False):
    eff = (k - 1) * dilation + 1
    pad = 0 if causal else (eff // 2 if padding is None else padding)
    m = torch.nn.Conv1d(ci, co, k, stride=stride, dilation=dilation, padding=pad, bias=bias)
    if wn:
        m = weight_norm(m)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    x = torch.rand(B, ci, T, generator=gen) * 2 - 1
    xin = F.pad(x, (eff - 1, 0)) if causal else x
    with torch.no_grad():
        y = m(xin)
    out[name + '.x'] = x.permute(0, 2, 1).contiguous()
    out[name + '.y'] = y.permute(0, 2, 1).contiguous()
    for key, v in m.state_dict().items():
        out[name + '.mod.' + key] = v.contiguous()


def causal_conv2d_case(out, name, gen, B, H, W, ci, co, kh, kw, stride=(1, 1), mode='causal_height'):
    """ltx_core CausalConv2d: explicit zero pad then an inner nn.Conv2d (padding 0), keys .conv.*."""
    class CausalConv2d(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(ci, co, (kh, kw), stride=stride, padding=0)

        def forward(self, x):
            ph, pw = kh - 1, kw - 1
            if mode == 'causal_height':
                pads = (pw // 2, pw - pw // 2, ph, 0)
            elif mode == 'causal_width':
                pads = (pw, 0, ph // 2, ph - ph // 2)
            else:  # zeros: torch Conv2d(padding=k//2)
                pads = (kw // 2, kw // 2, kh // 2, kh // 2)
            return self.conv(F.pad(x, pads))

    m = CausalConv2d()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    x = torch.rand(B, ci, H, W, generator=gen) * 2 - 1
    with torch.no_grad():
        y = m(x)
    out[name + '.x'] = x.permute(0, 2, 3, 1).contiguous()
    out[name + '.y'] = y.permute(0, 2, 3, 1).contiguous()
    for key, v in m.state_dict().items():
        out[name + '.mod.' + key] = v.contiguous()


def conv_transpose1d_case(out, name, gen, B, T, ci, co, k, stride, padding=None, output_padding=0,
                          dilation=1, bias=True, wn=False):
    p = (k - stride) // 2 if padding is None else padding
    m = torch.nn.ConvTranspose1d(ci, co, k, stride=stride, padding=p, output_padding=output_padding,
                                 dilation=dilation, bias=bias)
    if wn:
        m = weight_norm(m)  # dim 0 = in_channels for a transposed conv
    with torch.no_grad():
        for q in m.parameters():
            q.copy_(torch.randn(q.shape, generator=gen) * 0.3)
    x = torch.rand(B, ci, T, generator=gen) * 2 - 1
    with torch.no_grad():
        y = m(x)
    out[name + '.x'] = x.permute(0, 2, 1).contiguous()
    out[name + '.y'] = y.permute(0, 2, 1).contiguous()
    for key, v in m.state_dict().items():
        out[name + '.mod.' + key] = v.contiguous()


def main():
    out_dir = sys.argv[1]
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    t = {}
    # BigVGAN AMP conv: k 7, dilation 3, "same", weight-normed.
    conv1d_case(t, 'c1_amp', gen, B=2, T=53, ci=12, co=12, k=7, dilation=3, wn=True)
    # conv_pre-like: k 7, bias, plain weights.
    conv1d_case(t, 'c1_pre', gen, B=1, T=40, ci=16, co=24, k=7)
    # MiniMax DAC encoder: k = 2s, padding ceil(s/2).
    conv1d_case(t, 'c1_dac', gen, B=1, T=41, ci=8, co=16, k=4, stride=2, padding=1)
    # Causal, strided, dilated, no bias.
    conv1d_case(t, 'c1_causal', gen, B=2, T=37, ci=6, co=10, k=5, stride=2, dilation=2, causal=True,
                bias=False)
    # conv_post-like: no bias, 24 → 2, weight-normed.
    conv1d_case(t, 'c1_post', gen, B=1, T=45, ci=24, co=2, k=7, bias=False, wn=True)
    # mel-VAE decoder convs (CausalConv2d, causal on height = time).
    causal_conv2d_case(t, 'c2_causal_h', gen, B=1, H=9, W=16, ci=8, co=12, kh=3, kw=3)
    causal_conv2d_case(t, 'c2_short', gen, B=2, H=5, W=8, ci=12, co=6, kh=1, kw=1)
    causal_conv2d_case(t, 'c2_causal_w', gen, B=1, H=7, W=10, ci=4, co=5, kh=3, kw=3,
                       mode='causal_width')
    causal_conv2d_case(t, 'c2_zeros_s2', gen, B=1, H=11, W=9, ci=5, co=7, kh=3, kw=3, stride=(2, 1),
                       mode='zeros')
    # Upsamplers: LTX ups.0 (k 11, s 5, p 3), ups.1.. (k 4, s 2), BWE ups.0 (k 12, s 6), weight-normed.
    conv_transpose1d_case(t, 'ct_ltx0', gen, B=1, T=13, ci=16, co=8, k=11, stride=5, wn=True)
    conv_transpose1d_case(t, 'ct_k4s2', gen, B=2, T=19, ci=8, co=4, k=4, stride=2, wn=True)
    conv_transpose1d_case(t, 'ct_bwe0', gen, B=1, T=11, ci=12, co=6, k=12, stride=6)
    conv_transpose1d_case(t, 'ct_op', gen, B=1, T=10, ci=5, co=7, k=3, stride=2, padding=1,
                          output_padding=1, dilation=2, bias=False)
    st.save(os.path.join(out_dir, 'conv.safetensors'), t,
            {'generator': 'tools/goldens/gen_conv.py', 'torch': torch.__version__})


if __name__ == '__main__':
    main()
