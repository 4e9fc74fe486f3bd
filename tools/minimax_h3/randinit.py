"""Seeded random weights for the MiniMax-H3 audio VAE, scaled so activations stay in range through both
directions (no NaN/inf, decode not mostly clipped).

Encoder convs w ~ N(0, (s/√fan)²) with s = 1 (the residual units' k1 conv 0.5), biases N(0, 0.02²), Snake1d
α ∈ [0.5, 1.5] (linear); weight norm g = ‖v‖·r, r ∈ [0.8, 1.2]. pre_block: Linear 1/√in, LayerNorm γ = 1 +
N(0, 0.1²), β N(0, 0.02²), q/v biases N(0, 0.02²), zero_k_bias zeros. Posterior heads and dec_in_proj 1/√in.
Decoder: tools/ltx_audio/randinit.init_vocoder (conv_post 0.08/√fan)."""
import math

import torch
from torch import nn

from .model import MiniMaxH3AudioVAE, Snake1d

import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ltx_audio import randinit as R  # noqa: E402


def _fill_wn(g, m, scale):
    v = m.weight_v if hasattr(m, 'weight_v') else m.weight
    fan = v.shape[1] * v.shape[2]
    with torch.no_grad():
        v.copy_(torch.randn(v.shape, generator=g) * (scale / math.sqrt(fan)))
        if m.bias is not None:
            m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.02)
        if hasattr(m, 'weight_g'):
            nrm = v.pow(2).sum(dim=(1, 2), keepdim=True).sqrt()
            m.weight_g.copy_(nrm * (0.8 + 0.4 * torch.rand(nrm.shape, generator=g)))


def random_h3(cfg, seed):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    m = MiniMaxH3AudioVAE(cfg)
    for name, mod in m.encoder.named_modules():
        if isinstance(mod, nn.Conv1d):
            _fill_wn(g, mod, 0.5 if name.endswith('block.3') else 1.0)
        elif isinstance(mod, Snake1d):
            with torch.no_grad():
                mod.alpha.copy_(0.5 + torch.rand(mod.alpha.shape, generator=g))
    for mod in [m.mean_proj, m.logs_proj, m.dec_in_proj]:
        _fill_wn(g, mod, 1.0)
    with torch.no_grad():
        for name, mod in m.pre_block.named_modules():
            if isinstance(mod, nn.Linear):
                mod.weight.copy_(torch.randn(mod.weight.shape, generator=g) / math.sqrt(mod.weight.shape[1]))
                if mod.bias is not None:
                    mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.02)
            elif isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(1 + 0.1 * torch.randn(mod.weight.shape, generator=g))
                mod.bias.copy_(0.02 * torch.randn(mod.bias.shape, generator=g))
        m.pre_block.attn.q_bias.copy_(0.02 * torch.randn(m.pre_block.attn.q_bias.shape, generator=g))
        m.pre_block.attn.v_bias.copy_(0.02 * torch.randn(m.pre_block.attn.v_bias.shape, generator=g))
    R.init_vocoder(g, m.decoder, 0.08)
    return m.eval()
