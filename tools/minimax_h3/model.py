"""MiniMax-H3 audio VAE reference (fp32 PyTorch). Key names are the diffusers module tree:
encoder.block.*, pre_block.*, mean_proj, logs_proj, dec_in_proj, decoder.* (NVIDIA BigVGAN names).

  encode: wave (B, 1, L) → zero right-pad to hop·⌈L/hop⌉ → encoder (B, latent_dim, T) → pre_block
          (causal attention, heads averaged, adaptive pool to latent_channels) → mean_proj / logs_proj
  decode: latents (B, latent_channels, T) → dec_in_proj (k1) → BigVGAN → clamp [-1, 1], (B, 1, hop·T)
Neither applies latents_mean / latents_std (the pipeline's job).
"""
import copy
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import remove_weight_norm, weight_norm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from ltx_audio.bigvgan import BigVGAN  # noqa: E402

CLASS_NAME = 'AutoencoderKLMiniMaxH3Audio'

LATENTS_MEAN = [
    -0.020211687488382354, 0.3876466479950502, -0.04398279799186767, -0.28591514936373,
    0.08179686214561671, -0.35782641352446604, 0.040623809960919084, -0.01552534501956604,
    -0.223362481667332, 0.1821006842509091, 0.2941778783780663, -0.07901167601970885,
    -0.056815072777201, -0.3699028221860095, -0.31616315591624855, 0.5905951377425391,
    -0.052139568068853864, 0.013673160263486295, -0.03691647864630577, 0.09732660653298163,
    -0.3394662328788498, -0.30685677538541667, -0.24504598907458763, -0.034698524462007344,
    0.02868032184767538, -0.21217779266454084, -0.1678263169941987, 0.3221287889040614,
    -0.1223055851554907, 0.4356604928128464, -0.0502599202236253, 0.3979258376211797]
LATENTS_STD = [
    1.6895524230479284, 2.76263727217653, 1.7945344281264435, 1.6801681847309828,
    1.6390226546605453, 2.7788298348882177, 1.7659090095747236, 1.6199757612137327,
    2.6336525640336896, 1.8539356672817833, 2.5056497896915633, 1.811019237886178,
    1.9579657790720237, 1.6685498243529284, 1.4922469314453364, 3.298670198067373,
    1.9491804496832168, 1.8720003270431442, 1.8334080103291832, 1.6488070416529093,
    1.6176957696319716, 1.9131449234774398, 1.5695245398428617, 1.6943659940415912,
    1.8318420762504692, 1.5540637421583379, 1.9344930328968526, 1.599198216109855,
    1.718045989838149, 1.6307219190837705, 1.8661226051202384, 1.5613768203168363]

RELEASED_CONFIG = {
    '_class_name': CLASS_NAME,
    'encoder_dim': 64, 'encoder_rates': [2, 4, 4, 5, 5], 'latent_dim': 2048, 'latent_channels': 32,
    'num_attention_heads': 8, 'decoder_dim': 1024, 'decoder_rates': [5, 5, 2, 2, 2, 2, 2],
    'decoder_kernel_sizes': [9, 9, 4, 4, 4, 4, 4], 'resblock_kernel_sizes': [3, 7, 11],
    'resblock_dilation_sizes': [[1, 3, 5], [1, 3, 5], [1, 3, 5]], 'sampling_rate': 32000,
    'latents_mean': LATENTS_MEAN, 'latents_std': LATENTS_STD,
}


def reduced_config(kind='small'):
    """Reduced widths for fixtures and tests.
    'small': the released rates and kernels (hop 800), thin widths (decoder_dim 128 is the least a 7-stage
             decoder allows).
    'tiny':  a shorter structure with every kind of stage (strides 2 / 4 / 5, a (9, 5) and (4, 2) upsampler),
             hop 40, small enough for a golden fixture of a few hundred KB."""
    c = copy.deepcopy(RELEASED_CONFIG)
    if kind == 'small':
        c.update(encoder_dim=2, latent_dim=64, latent_channels=8, num_attention_heads=2, decoder_dim=128)
    elif kind == 'tiny':
        c.update(encoder_dim=4, encoder_rates=[2, 4, 5], latent_dim=32, latent_channels=8, num_attention_heads=2,
                 decoder_dim=32, decoder_rates=[5, 2, 2, 2], decoder_kernel_sizes=[9, 4, 4, 4])
    else:
        raise ValueError(kind)
    c['latents_mean'] = LATENTS_MEAN[:c['latent_channels']]
    c['latents_std'] = LATENTS_STD[:c['latent_channels']]
    return c


def hop(cfg):
    return math.prod(cfg['encoder_rates'])


def check_config(cfg):
    assert cfg.get('_class_name', CLASS_NAME) == CLASS_NAME
    assert math.prod(cfg['decoder_rates']) == math.prod(cfg['encoder_rates']), 'decoder/encoder hop differ'
    assert cfg['latent_dim'] % cfg['latent_channels'] == 0
    assert cfg['latent_dim'] % cfg['num_attention_heads'] == 0
    assert len(cfg['decoder_rates']) == len(cfg['decoder_kernel_sizes'])
    for u, k in zip(cfg['decoder_rates'], cfg['decoder_kernel_sizes']):
        assert (k - u) % 2 == 0, 'transposed conv needs k − u even'
    assert cfg['decoder_dim'] >> len(cfg['decoder_rates']) >= 1, 'decoder_dim too small for its stages'


# ---- encoder (DAC lineage) -------------------------------------------------------------------------------------

class Snake1d(nn.Module):
    """y = x + sin²(α x) / (α + 1e-9), α linear, stored (1, C, 1)."""

    def __init__(self, c):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(1, c, 1))

    def forward(self, x):
        return x + (self.alpha + 1e-9).reciprocal() * torch.sin(self.alpha * x).pow(2)


def wn_conv(cin, cout, k, stride=1, padding=0, dilation=1, bias=True):
    return weight_norm(nn.Conv1d(cin, cout, k, stride=stride, padding=padding, dilation=dilation, bias=bias))


class ResidualUnit(nn.Module):
    def __init__(self, c, d):
        super().__init__()
        self.block = nn.Sequential(Snake1d(c), wn_conv(c, c, 7, padding=3 * d, dilation=d), Snake1d(c),
                                   wn_conv(c, c, 1))

    def forward(self, x):
        r = self.block(x)
        assert r.shape == x.shape  # the pads keep the length: no shortcut crop
        return x + r


class EncoderBlock(nn.Module):
    def __init__(self, c, s):
        super().__init__()
        self.block = nn.Sequential(ResidualUnit(c, 1), ResidualUnit(c, 3), ResidualUnit(c, 9), Snake1d(c),
                                   wn_conv(c, 2 * c, 2 * s, stride=s, padding=math.ceil(s / 2)))

    def forward(self, x):
        return self.block(x)


class Encoder(nn.Module):
    def __init__(self, dim, rates, latent_dim):
        super().__init__()
        layers = [wn_conv(1, dim, 7, padding=3)]
        c = dim
        for s in rates:
            layers.append(EncoderBlock(c, s))
            c *= 2
        layers += [Snake1d(c), wn_conv(c, latent_dim, 3, padding=1)]
        self.block = nn.Sequential(*layers)

    def forward(self, x, trace=None):
        for i, m in enumerate(self.block):
            x = m(x)
            if trace is not None:
                trace[f'encoder.block.{i}'] = x
        return x


# ---- causal-attention projection -----------------------------------------------------------------------------

class CausalHeadMeanAttention(nn.Module):
    """Fused qkv without its own bias; bias = [q_bias, zero_k_bias, v_bias]; causal softmax per head;
    heads averaged; adaptive average pool head_dim → out_dim over features; proj (out_dim → out_dim)."""

    def __init__(self, dim, heads, out_dim):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.out_dim = out_dim
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.q_bias = nn.Parameter(torch.zeros(dim))
        self.v_bias = nn.Parameter(torch.zeros(dim))
        self.register_buffer('zero_k_bias', torch.zeros(dim))
        self.proj = nn.Linear(out_dim, out_dim)

    def forward(self, a):
        B, T, D = a.shape
        bias = torch.cat([self.q_bias, self.zero_k_bias, self.v_bias])
        qkv = F.linear(a, self.qkv.weight, bias).reshape(B, T, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (B, H, T, hd)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)  # key j > query i hidden
        s = s.masked_fill(mask, float('-inf'))
        o = torch.softmax(s, dim=-1) @ v  # (B, H, T, hd)
        o = o.mean(dim=1)  # heads averaged → (B, T, hd)
        pooled = F.adaptive_avg_pool1d(o, self.out_dim)  # over the feature axis → (B, T, out_dim)
        return self.proj(pooled)


class GeGluMlp(nn.Module):
    def __init__(self, c, ratio=2):
        super().__init__()
        self.norm = nn.LayerNorm(c, eps=1e-5)
        self.w0 = nn.Linear(c, ratio * c)
        self.w1 = nn.Linear(c, ratio * c)
        self.w2 = nn.Linear(ratio * c, c)

    def forward(self, g):  # g is already norm2(y); mlp.norm is applied here
        g = self.norm(g)
        return self.w2(F.gelu(self.w0(g), approximate='tanh') * self.w1(g))


class PreBlock(nn.Module):
    def __init__(self, dim, heads, out_dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = CausalHeadMeanAttention(dim, heads, out_dim)
        self.norm3 = nn.LayerNorm(dim, eps=1e-5)
        self.proj = nn.Linear(dim, out_dim)
        self.norm2 = nn.LayerNorm(out_dim, eps=1e-5)
        self.mlp = GeGluMlp(out_dim)

    def forward(self, h):  # (B, T, D) → (B, T, C)
        y = self.proj(self.norm3(h)) + self.attn(self.norm1(h))
        return y + self.mlp(self.norm2(y))


# ---- the whole VAE ---------------------------------------------------------------------------------------------

def decoder_h(cfg):
    """The BigVGAN-v2 config dict the decoder is (tools/ltx_audio/bigvgan.py)."""
    return {'num_mels': cfg['latent_dim'], 'upsample_initial_channel': cfg['decoder_dim'],
            'upsample_rates': cfg['decoder_rates'], 'upsample_kernel_sizes': cfg['decoder_kernel_sizes'],
            'resblock_kernel_sizes': cfg['resblock_kernel_sizes'],
            'resblock_dilation_sizes': cfg['resblock_dilation_sizes'], 'resblock': '1',
            'activation': 'snakebeta', 'snake_logscale': True, 'use_tanh_at_final': False,
            'use_bias_at_final': False}


class MiniMaxH3AudioVAE(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        check_config(cfg)
        self.cfg = cfg
        self.hop = hop(cfg)
        D, C = cfg['latent_dim'], cfg['latent_channels']
        self.encoder = Encoder(cfg['encoder_dim'], cfg['encoder_rates'], D)
        self.pre_block = PreBlock(D, cfg['num_attention_heads'], C)
        self.mean_proj = nn.Conv1d(C, C, 1)
        self.logs_proj = nn.Conv1d(C, C, 1)
        self.dec_in_proj = nn.Conv1d(C, D, 1)
        self.decoder = BigVGAN(decoder_h(cfg))

    def pad(self, wave):
        L = wave.shape[-1]
        assert L >= 1
        T = -(-L // self.hop)
        return F.pad(wave, (0, T * self.hop - L))

    def encode(self, wave, trace=None):
        """wave (B, 1, L) → (mean, log std), each (B, C, ⌈L/hop⌉)."""
        assert wave.dim() == 3 and wave.shape[1] == 1
        h = self.encoder(self.pad(wave), trace)
        x = self.pre_block(h.transpose(1, 2)).transpose(1, 2)
        if trace is not None:
            trace['pre_block'] = x
        return self.mean_proj(x), self.logs_proj(x)

    def decode(self, z, trace=None):
        """z (B, C, T) denormalised latents → wave (B, 1, hop·T) in [-1, 1]."""
        x = self.dec_in_proj(z)
        if trace is not None:
            trace['dec_in_proj'] = x
        return self.decoder(x, trace, 'decoder')

    def fold_weight_norm(self):
        for m in self.modules():
            if hasattr(m, 'weight_g'):
                remove_weight_norm(m)
        return self


# ---- FLOPs (2 per multiply-add), per batch item ----------------------------------------------------------------

def decode_flops(cfg, T):
    D, C, c0 = cfg['latent_dim'], cfg['latent_channels'], cfg['decoder_dim']
    f = 2 * C * D * T + 2 * D * c0 * 7 * T
    n, c = T, c0
    acts = 0
    for u, k in zip(cfg['decoder_rates'], cfg['decoder_kernel_sizes']):
        f += 2 * c * (c // 2) * k * n  # transposed conv: every input row meets k taps
        n *= u
        c //= 2
        ks = sum(cfg['resblock_kernel_sizes'])
        f += 2 * c * c * 2 * ks * len(cfg['resblock_dilation_sizes'][0]) * n
        acts += 2 * len(cfg['resblock_kernel_sizes']) * len(cfg['resblock_dilation_sizes'][0]) * c * n
    acts += c * n
    f += 48 * acts + 2 * c * 7 * n
    return f


def encode_flops(cfg, T):
    n = hop(cfg) * T
    c = cfg['encoder_dim']
    f = 2 * c * 7 * n
    for s in cfg['encoder_rates']:
        f += 3 * 2 * (c * c * 7 + c * c) * n  # residual units
        f += 2 * c * 2 * c * 2 * s * (n // s)  # strided conv
        n //= s
        c *= 2
    D, C = cfg['latent_dim'], cfg['latent_channels']
    f += 2 * c * D * 3 * T + 2 * D * 3 * D * T + 4 * D * T * T  # final k3 conv, qkv, QKᵀ + AV (full T×T)
    f += (2 * D * C + 2 * C * C + 6 * C * 2 * C + 4 * C * C) * T  # proj, attn.proj, GeGLU, mean/logs heads
    return f


# ---- the diffusers folder -------------------------------------------------------------------------------------

def load_folder(folder, dtype=torch.float32):
    """config.json + diffusion_pytorch_model.safetensors (weight norm unfolded or folded; any float dtype) →
    model in fp32 (diffusers keeps every submodule in fp32)."""
    from ltx_audio import io as lio
    with open(os.path.join(folder, 'config.json')) as f:
        cfg = json.load(f)
    if cfg.get('_class_name') != CLASS_NAME:
        raise ValueError(f'{folder}: _class_name {cfg.get("_class_name")!r}, expected {CLASS_NAME}')
    state, _ = lio.load_safetensors(os.path.join(folder, 'diffusion_pytorch_model.safetensors'))
    state = {k: v.float() for k, v in state.items()}
    model = MiniMaxH3AudioVAE(cfg)
    if not any(k.endswith('.weight_g') for k in state):
        model.fold_weight_norm()
    own = model.state_dict()
    missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    bad = [k for k in own if k in state and tuple(own[k].shape) != tuple(state[k].shape)]
    if missing or unexpected or bad:
        raise KeyError(f'{folder}: missing {missing[:20]}, unexpected {unexpected[:20]}, wrong shape {bad[:20]}')
    model.load_state_dict(state)
    return model.eval()
