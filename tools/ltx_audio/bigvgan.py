"""NVIDIA BigVGAN generator (v1 / v2 / base configs) and its meldataset.py mel front end, in plain
PyTorch, written from bigvgan.md. NVIDIA key names: conv_pre, ups.{i}.0, resblocks.{r}.convs{1,2}.{j},
resblocks.{r}.activations.{m}, activation_post, conv_post; weight-normed convs carry weight_g/weight_v
(legacy torch.nn.utils.weight_norm, dim 0) or, when folded, plain weight.
"""
import re

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import remove_weight_norm, weight_norm

from .filters import slaney_mel_filterbank
from .model import Activation1d, Snake, SnakeBeta, _tr, get_padding


def _act(h, c):
    logscale = h.get('snake_logscale', False)
    if h.get('activation', 'snake') == 'snakebeta':
        return Activation1d(SnakeBeta(c, alpha_logscale=logscale), sinc='torch')
    if h.get('activation') == 'snake':
        return Activation1d(Snake(c, alpha_logscale=logscale), sinc='torch')
    raise ValueError(f'activation {h.get("activation")!r}: expected "snake" or "snakebeta"')


class AMPBlock1(nn.Module):
    def __init__(self, h, c, k=3, dilation=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList([weight_norm(nn.Conv1d(c, c, k, 1, dilation=d, padding=get_padding(k, d))) for d in dilation])
        self.convs2 = nn.ModuleList([weight_norm(nn.Conv1d(c, c, k, 1, dilation=1, padding=get_padding(k, 1))) for _ in dilation])
        self.activations = nn.ModuleList([_act(h, c) for _ in range(2 * len(dilation))])

    def forward(self, x):
        acts1, acts2 = self.activations[::2], self.activations[1::2]
        for c1, c2, a1, a2 in zip(self.convs1, self.convs2, acts1, acts2):
            x = x + c2(a2(c1(a1(x))))
        return x


class AMPBlock2(nn.Module):
    def __init__(self, h, c, k=3, dilation=(1, 3, 5)):
        super().__init__()
        self.convs = nn.ModuleList([weight_norm(nn.Conv1d(c, c, k, 1, dilation=d, padding=get_padding(k, d))) for d in dilation])
        self.activations = nn.ModuleList([_act(h, c) for _ in dilation])

    def forward(self, x):
        for c, a in zip(self.convs, self.activations):
            x = x + c(a(x))
        return x


class BigVGAN(nn.Module):
    """mel (B, num_mels, T) → wav (B, 1, T·Πu). Config = NVIDIA config.json dict."""

    def __init__(self, h):
        super().__init__()
        self.h = h
        self.num_kernels = len(h['resblock_kernel_sizes'])
        self.num_upsamples = len(h['upsample_rates'])
        c0 = h['upsample_initial_channel']
        self.conv_pre = weight_norm(nn.Conv1d(h['num_mels'], c0, 7, 1, padding=3))
        if h['resblock'] not in ('1', '2'):
            raise ValueError(f'resblock {h["resblock"]!r}: expected "1" or "2"')
        blk = AMPBlock1 if h['resblock'] == '1' else AMPBlock2
        self.ups = nn.ModuleList()
        for i, (u, k) in enumerate(zip(h['upsample_rates'], h['upsample_kernel_sizes'])):
            self.ups.append(nn.ModuleList([weight_norm(nn.ConvTranspose1d(c0 // 2 ** i, c0 // 2 ** (i + 1), k, u, padding=(k - u) // 2))]))
        self.resblocks = nn.ModuleList()
        for i in range(len(self.ups)):
            ch = c0 // 2 ** (i + 1)
            for k, d in zip(h['resblock_kernel_sizes'], h['resblock_dilation_sizes']):
                self.resblocks.append(blk(h, ch, k, tuple(d)))
        self.activation_post = _act(h, ch)
        self.use_bias_at_final = h.get('use_bias_at_final', True)
        self.use_tanh_at_final = h.get('use_tanh_at_final', True)
        self.conv_post = weight_norm(nn.Conv1d(ch, 1, 7, 1, padding=3, bias=self.use_bias_at_final))
        self.weight_norm_applied = True

    def forward(self, x, trace=None, name='bigvgan'):
        x = self.conv_pre(x)
        _tr(trace, f'{name}.conv_pre', x)
        for i in range(self.num_upsamples):
            for up in self.ups[i]:
                x = up(x)
            xs = None
            for j in range(self.num_kernels):
                y = self.resblocks[i * self.num_kernels + j](x)
                xs = y if xs is None else xs + y
            x = xs / self.num_kernels
            _tr(trace, f'{name}.stage{i}', x)
        x = self.activation_post(x)
        x = self.conv_post(x)
        _tr(trace, f'{name}.conv_post', x)
        return torch.tanh(x) if self.use_tanh_at_final else torch.clamp(x, -1.0, 1.0)

    def remove_weight_norm(self):
        for m in self.modules():
            if hasattr(m, 'weight_g'):
                remove_weight_norm(m)
        self.weight_norm_applied = False
        return self


_PARAM_RE = re.compile(r'^(.*)\.parametrizations\.weight\.original([01])$')


def normalize_weight_norm_keys(state):
    """New-style parametrisation names → legacy weight_g (original0) / weight_v (original1)."""
    out = {}
    for k, v in state.items():
        m = _PARAM_RE.match(k)
        out[(m.group(1) + ('.weight_g' if m.group(2) == '0' else '.weight_v')) if m else k] = v
    return out


def load_bigvgan(state, h):
    """Build from a generator state dict in either layout (weight_g/weight_v or folded weight)."""
    state = normalize_weight_norm_keys({k: torch.as_tensor(v).float() for k, v in state.items()})
    model = BigVGAN(h)
    if not any(k.endswith('.weight_g') for k in state):
        model.remove_weight_norm()
    own = model.state_dict()
    missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    if missing or unexpected:
        raise KeyError(f'BigVGAN state dict mismatch: missing {missing[:20]}, unexpected {unexpected[:20]}')
    for k, v in state.items():
        if tuple(v.shape) != tuple(own[k].shape):
            raise ValueError(f'{k}: expected shape {tuple(own[k].shape)}, got {tuple(v.shape)}')
    model.load_state_dict(state)
    return model.eval()


# --- meldataset.py front end -----------------------------------------------------------------

def mel_spectrogram(y, n_fft, num_mels, sampling_rate, hop_size, win_size, fmin, fmax, center=False, trace=None):
    """y: (B, L) in [−1, 1] → log-mel (B, num_mels, ⌊L/hop⌋). Reflect pad (n_fft−hop)/2, periodic Hann,
    sqrt(re²+im²+1e-9), Slaney mel, ln(max(·, 1e-5))."""
    mel_basis = torch.from_numpy(slaney_mel_filterbank(sampling_rate, n_fft, num_mels, fmin, fmax)).to(y.dtype)
    window = torch.hann_window(win_size, dtype=y.dtype)
    pad = (n_fft - hop_size) // 2
    y = F.pad(y.unsqueeze(1), (pad, pad), mode='reflect').squeeze(1)
    spec = torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size, window=window, center=center,
                      pad_mode='reflect', normalized=False, onesided=True, return_complex=True)
    spec = torch.sqrt(torch.view_as_real(spec).pow(2).sum(-1) + 1e-9)
    _tr(trace, 'mel.magnitude', spec)
    mel = torch.matmul(mel_basis, spec)
    return torch.log(torch.clamp(mel, min=1e-5))


def mel_from_config(y, h, trace=None):
    return mel_spectrogram(y, h['n_fft'], h['num_mels'], h['sampling_rate'], h['hop_size'], h['win_size'],
                           h['fmin'], h['fmax'], trace=trace)
