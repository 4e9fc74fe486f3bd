"""Seeded random weights at the real architectures, scaled so activations stay in a sane range
through the whole chain (no NaN/inf, outputs not all clipped). Filters and STFT/mel bases are the
real fixed values, not random.

Scales (w ~ N(0, s²), fan = C_in·k, or C_in·k/u for a transposed conv):
  Stage A: conv s = 1/√fan (second conv of a block and nin_shortcut 0.5/√fan), conv_out s = 1.5/√fan,
           conv_out bias −5 (log-mel-like output around −5), statistics std ∈ [0.5, 1.5], mean ~ N(0, 0.3²).
  Vocoders: conv_pre 0.5/√fan (the log-mel input has a large DC), ups 1/√fan, AMP/ResBlock convs1 1/√fan,
           convs2 0.4/√fan, conv_post 0.08/√fan (LTX-2.3 main) / 0.05/√fan (BWE residual) / 0.5/√fan (tanh
           vocoders), biases N(0, 0.02²);
           SnakeBeta log α, log β ~ N(0, 0.2²).
"""
import math

import numpy as np
import torch
from torch import nn

from .filters import causal_stft_bases, slaney_mel_filterbank


def _fill_conv(g, mod, scale, transposed=False, stride=1):
    w = mod.weight
    if transposed:
        fan = w.shape[0] * w.shape[2] / stride
    else:
        fan = w.shape[1] * int(np.prod(w.shape[2:]))
    with torch.no_grad():
        w.copy_(torch.randn(w.shape, generator=g) * (scale / math.sqrt(fan)))
        if mod.bias is not None:
            mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.02)


def _init_snakes(g, module):
    for name, p in module.named_parameters():
        if name.endswith('.alpha') or name.endswith('.beta'):
            with torch.no_grad():
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)


def init_stage_a(g, decoder, stats):
    for name, m in decoder.named_modules():
        if isinstance(m, nn.Conv2d):
            if name.startswith('conv_out'):
                s = 1.5
            elif '.conv2.' in name + '.' or 'nin_shortcut' in name:
                s = 0.5
            else:
                s = 1.0
            _fill_conv(g, m, s)
    with torch.no_grad():
        decoder.conv_out.conv.bias.fill_(-5.0)
        n = getattr(stats, 'std-of-means').shape[0]
        getattr(stats, 'std-of-means').copy_(0.5 + torch.rand(n, generator=g))
        getattr(stats, 'mean-of-means').copy_(torch.randn(n, generator=g) * 0.3)


def init_vocoder(g, voc, post_scale=0.5):
    """ltx_core Vocoder or NVIDIA BigVGAN (same attribute names for convs; weight-norm aware)."""
    for name, m in voc.named_modules():
        if isinstance(m, (nn.Conv1d, nn.ConvTranspose1d)):
            if hasattr(m, 'weight_g'):
                # weight_norm module: fill v, then set g = ‖v‖ · r with r ∈ [0.8, 1.2] so W ≈ v·r
                v = m.weight_v
                tmp = nn.Conv1d(1, 1, 1)
                tmp.weight = nn.Parameter(torch.empty_like(v))
                tmp.bias = m.bias
                _fill_module(g, name, tmp, isinstance(m, nn.ConvTranspose1d), m.stride[0], post_scale)
                with torch.no_grad():
                    v.copy_(tmp.weight)
                    dims = tuple(range(1, v.dim()))
                    nrm = v.pow(2).sum(dim=dims, keepdim=True).sqrt()
                    m.weight_g.copy_(nrm * (0.8 + 0.4 * torch.rand(nrm.shape, generator=g)))
            else:
                _fill_module(g, name, m, isinstance(m, nn.ConvTranspose1d), m.stride[0], post_scale)
    _init_snakes(g, voc)


def _fill_module(g, name, m, transposed, stride, post_scale):
    if name.startswith('conv_pre'):
        s = 0.5
    elif name.startswith('conv_post'):
        s = post_scale
    elif '.convs2.' in name or '.convs.' in name:
        s = 0.4
    else:
        s = 1.0
    _fill_conv(g, m, s, transposed, stride)


def init_mel_stft(mel_stft, n_fft, num_mels, sr=16000, with_inverse=True):
    fwd, inv = causal_stft_bases(n_fft)
    with torch.no_grad():
        # the checkpoint stores bf16 bases; store bf16-representable values
        mel_stft.stft_fn.forward_basis.copy_(torch.from_numpy(fwd).to(torch.bfloat16).float())
        mel_stft.stft_fn.inverse_basis.copy_(torch.from_numpy(inv).to(torch.bfloat16).float())
        mel_stft.mel_basis.copy_(torch.from_numpy(slaney_mel_filterbank(sr, n_fft, num_mels, 0.0, sr / 2)).to(torch.bfloat16).float())


def init_ltx(model, seed):
    g = torch.Generator().manual_seed(seed)
    init_stage_a(g, model.audio_vae.decoder, model.audio_vae.per_channel_statistics)
    if model.has_bwe:
        bwe = model.config['vocoder']['bwe']
        init_vocoder(g, model.vocoder.vocoder, 0.08)
        init_vocoder(g, model.vocoder.bwe_generator, 0.05)
        init_mel_stft(model.vocoder.mel_stft, bwe['n_fft'], bwe['num_mels'], bwe['input_sampling_rate'])
    else:
        init_vocoder(g, model.vocoder, 0.5)
    return model


def random_ltx(config, seed, bf16=True):
    """LtxAudioDecode with seeded random weights (bf16-representable by default, like the real files)."""
    from .model import LtxAudioDecode
    torch.manual_seed(seed)
    m = init_ltx(LtxAudioDecode(config), seed)
    if bf16:
        round_to_bf16_(m)
    return m.eval()


def random_bigvgan(h, seed, bf16=False):
    """NVIDIA BigVGAN with weight norm (weight_g / weight_v) and seeded random weights."""
    from .bigvgan import BigVGAN
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    m = BigVGAN(h)
    init_vocoder(g, m, 0.5 if h.get('use_tanh_at_final', True) else 0.08)
    if bf16:  # parameters only: NVIDIA checkpoints keep the kaiser filter buffers in f32
        round_to_bf16_(m, params_only=True)
    return m.eval()


def round_to_bf16_(model, params_only=False):
    """Round every checkpoint tensor (parameters and persistent buffers, incl. the kaiser filters) to
    bf16-representable f32: the LTX checkpoints are stored in bf16 and the reference upcasts per op.
    The Hann resampler filter (persistent=False, computed) stays f32."""
    with torch.no_grad():
        for t in (model.parameters() if params_only else model.state_dict(keep_vars=True).values()):
            t.copy_(t.to(torch.bfloat16).float())
    return model
