"""LTX-2 / LTX-2.3 audio decode in plain PyTorch (torch ops only), written from
ltx2_audio_decode.md. Module attribute names are chosen so that `LtxAudioDecode.state_dict()`
yields exactly the checkpoint key names (audio_vae.decoder.*, audio_vae.per_channel_statistics.*,
vocoder.vocoder.*, vocoder.bwe_generator.*, vocoder.mel_stft.*; or vocoder.* for LTX-2 19B).

Layouts as in the reference: Stage A NCHW with H = time, W = mel bin; Stages B/C (B, C, T).
Every forward accepts an optional `trace` dict that collects named intermediate tensors.
"""
import copy
import json

import torch
import torch.nn.functional as F
from torch import nn

from .filters import hann_sinc_resampler_taps, kaiser_sinc_filter1d

LRELU_SLOPE = 0.1
LATENT_DOWNSAMPLE_FACTOR = 4

# How UpSample1d runs its depthwise transposed FIR. 'convt' = F.conv_transpose1d(groups=C) exactly as
# ltx_core / NVIDIA write it (the golden reference). PyTorch 1.13's CPU kernel for that grouped transposed
# conv is ~10x slower than a depthwise conv1d, so 'stuffed' (zero-stuff + depthwise conv1d with the flipped
# taps: the same sums in another order, ~1e-7 relative difference) is offered for benchmarking.
UPSAMPLE_IMPL = 'convt'


def set_upsample_impl(name):
    global UPSAMPLE_IMPL
    if name not in ('convt', 'stuffed'):
        raise ValueError(f'upsample impl {name!r}: expected "convt" or "stuffed"')
    UPSAMPLE_IMPL = name


def _tr(trace, name, t):
    if trace is not None:
        trace[name] = t.detach().clone()


# =============================================================================================
# Stage A: mel-VAE decoder (§4)
# =============================================================================================

class CausalConv2d(nn.Module):
    """Zero pad: time (H) top (k-1)*d, bottom 0; mel (W) floor/ceil split of (k-1)*d. Key stem .conv."""

    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride=1, padding=0)
        pad = k - 1
        self.pad = (pad // 2, pad - pad // 2, pad, 0)  # (W left, W right, H top, H bottom)

    def forward(self, x):
        return self.conv(F.pad(x, self.pad))


class PixelNorm(nn.Module):
    def __init__(self, dim=1, eps=1e-6):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x):
        return x / torch.sqrt(torch.mean(x ** 2, dim=self.dim, keepdim=True) + self.eps)


class ResnetBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm1 = PixelNorm()
        self.conv1 = CausalConv2d(cin, cout, 3)
        self.norm2 = PixelNorm()
        self.conv2 = CausalConv2d(cout, cout, 3)
        self.cin, self.cout = cin, cout
        if cin != cout:
            self.nin_shortcut = CausalConv2d(cin, cout, 1)

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))  # dropout 0
        if self.cin != self.cout:
            x = self.nin_shortcut(x)
        return x + h


class Upsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = CausalConv2d(c, c, 3)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2.0, mode='nearest')
        x = self.conv(x)
        return x[:, :, 1:, :]  # drop the first time row (causal)


class PerChannelStatistics(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer('std-of-means', torch.ones(n))
        self.register_buffer('mean-of-means', torch.zeros(n))

    def un_normalize(self, x):
        return x * getattr(self, 'std-of-means').to(x.dtype) + getattr(self, 'mean-of-means').to(x.dtype)


class AudioDecoder(nn.Module):
    """ddconfig → decoder. Keys under audio_vae.decoder. (conv_in, mid.block_{1,2}, up.{l}.block.{i},
    up.{l}.upsample, conv_out)."""

    def __init__(self, dd):
        super().__init__()
        if dd.get('norm_type', 'pixel') != 'pixel' or dd.get('causality_axis', 'height') != 'height':
            raise ValueError('audio_vae ddconfig: only norm_type "pixel" and causality_axis "height" are supported')
        if dd.get('attn_resolutions', []) or dd.get('mid_block_add_attention', False):
            raise ValueError('audio_vae ddconfig: attention in the decoder is not supported (shipped config has none)')
        ch, ch_mult, nrb = dd['ch'], list(dd['ch_mult']), dd['num_res_blocks']
        self.out_ch, self.mel_bins, self.z_channels = dd['out_ch'], dd['mel_bins'], dd['z_channels']
        self.num_resolutions = len(ch_mult)
        block_in = ch * ch_mult[-1]
        self.conv_in = CausalConv2d(dd['z_channels'], block_in, 3)
        self.mid = nn.Module()
        self.mid.block_1 = ResnetBlock(block_in, block_in)
        self.mid.attn_1 = nn.Identity()
        self.mid.block_2 = ResnetBlock(block_in, block_in)
        up = [None] * self.num_resolutions
        for level in reversed(range(self.num_resolutions)):
            stage = nn.Module()
            stage.block = nn.ModuleList()
            block_out = ch * ch_mult[level]
            for _ in range(nrb + 1):
                stage.block.append(ResnetBlock(block_in, block_out))
                block_in = block_out
            stage.attn = nn.ModuleList()
            if level != 0:
                stage.upsample = Upsample(block_in)
            up[level] = stage
        self.up = nn.ModuleList(up)
        self.norm_out = PixelNorm()
        self.conv_out = CausalConv2d(block_in, dd['out_ch'], 3)

    def forward(self, z, trace=None):
        """z: denormalised latent (B, z_channels, T, F) → (B, out_ch, max(4T−3, 1), mel_bins)."""
        t_lat = z.shape[2]
        h = self.conv_in(z)
        _tr(trace, 'stage_a.conv_in', h)
        h = self.mid.block_1(h)
        h = self.mid.block_2(h)
        _tr(trace, 'stage_a.mid', h)
        for level in reversed(range(self.num_resolutions)):
            stage = self.up[level]
            for blk in stage.block:
                h = blk(h)
            if level != 0:
                h = stage.upsample(h)
            _tr(trace, f'stage_a.up{level}', h)
        h = self.conv_out(F.silu(self.norm_out(h)))
        # _adjust_output_shape: crop, zero-pad at the end, crop (a no-op for the shipped config)
        frames = max(t_lat * LATENT_DOWNSAMPLE_FACTOR - (LATENT_DOWNSAMPLE_FACTOR - 1), 1)
        h = h[:, :self.out_ch, :frames, :self.mel_bins]
        h = F.pad(h, (0, self.mel_bins - h.shape[3], 0, frames - h.shape[2]))
        return h[:, :self.out_ch, :frames, :self.mel_bins]


def patchify(x):
    b, c, t, f = x.shape
    return x.permute(0, 2, 1, 3).reshape(b, t, c * f)  # feature index c*F + f


def unpatchify(x, c, f):
    b, t, _ = x.shape
    return x.reshape(b, t, c, f).permute(0, 2, 1, 3)


# =============================================================================================
# Stage B / C building blocks (§5, §6)
# =============================================================================================

class LowPassFilter1d(nn.Module):
    def __init__(self, cutoff=0.5, half_width=0.6, stride=1, kernel_size=12, sinc='ltx'):
        super().__init__()
        self.even = kernel_size % 2 == 0
        self.pad_left = kernel_size // 2 - int(self.even)
        self.pad_right = kernel_size // 2
        self.stride = stride
        self.register_buffer('filter', kaiser_sinc_filter1d(cutoff, half_width, kernel_size, sinc))

    def forward(self, x):
        c = x.shape[1]
        x = F.pad(x, (self.pad_left, self.pad_right), mode='replicate')
        return F.conv1d(x, self.filter.to(x.dtype).expand(c, -1, -1), stride=self.stride, groups=c)


class UpSample1d(nn.Module):
    def __init__(self, ratio=2, kernel_size=None, persistent=True, window_type='kaiser', sinc='ltx'):
        super().__init__()
        self.ratio = self.stride = ratio
        if window_type == 'hann':
            taps, self.pad, self.pad_left, self.pad_right = hann_sinc_resampler_taps(ratio)
            self.kernel_size = taps.shape[-1]
        else:
            self.kernel_size = int(6 * ratio // 2) * 2 if kernel_size is None else kernel_size
            self.pad = self.kernel_size // ratio - 1
            self.pad_left = self.pad * self.stride + (self.kernel_size - self.stride) // 2
            self.pad_right = self.pad * self.stride + (self.kernel_size - self.stride + 1) // 2
            taps = kaiser_sinc_filter1d(0.5 / ratio, 0.6 / ratio, self.kernel_size, sinc)
        self.register_buffer('filter', taps, persistent=persistent)

    def forward(self, x):
        c = x.shape[1]
        x = F.pad(x, (self.pad, self.pad), mode='replicate')
        filt = self.filter.to(x.dtype)
        if UPSAMPLE_IMPL == 'stuffed':
            b, _, lp = x.shape
            z = x.new_zeros(b, c, (lp - 1) * self.stride + 1)
            z[..., ::self.stride] = x
            k = filt.shape[-1]
            z = F.pad(z, (k - 1, k - 1))
            x = self.ratio * F.conv1d(z, filt.flip(-1).expand(c, -1, -1), groups=c)
        else:
            x = self.ratio * F.conv_transpose1d(x, filt.expand(c, -1, -1), stride=self.stride, groups=c)
        return x[..., self.pad_left:-self.pad_right]


class DownSample1d(nn.Module):
    def __init__(self, ratio=2, kernel_size=None, sinc='ltx'):
        super().__init__()
        k = int(6 * ratio // 2) * 2 if kernel_size is None else kernel_size
        self.lowpass = LowPassFilter1d(0.5 / ratio, 0.6 / ratio, ratio, k, sinc)

    def forward(self, x):
        return self.lowpass(x)


class Snake(nn.Module):
    def __init__(self, c, alpha_logscale=True, alpha=1.0):
        super().__init__()
        self.alpha_logscale = alpha_logscale
        self.alpha = nn.Parameter(torch.zeros(c) if alpha_logscale else torch.ones(c) * alpha)

    def forward(self, x):
        a = self.alpha.unsqueeze(0).unsqueeze(-1)
        if self.alpha_logscale:
            a = torch.exp(a)
        return x + (1.0 / (a + 1e-9)) * torch.sin(x * a).pow(2)


class SnakeBeta(nn.Module):
    def __init__(self, c, alpha_logscale=True, alpha=1.0):
        super().__init__()
        self.alpha_logscale = alpha_logscale
        self.alpha = nn.Parameter(torch.zeros(c) if alpha_logscale else torch.ones(c) * alpha)
        self.beta = nn.Parameter(torch.zeros(c) if alpha_logscale else torch.ones(c) * alpha)

    def forward(self, x):
        a = self.alpha.unsqueeze(0).unsqueeze(-1)
        b = self.beta.unsqueeze(0).unsqueeze(-1)
        if self.alpha_logscale:
            a, b = torch.exp(a), torch.exp(b)
        return x + (1.0 / (b + 1e-9)) * torch.sin(x * a).pow(2)


class Activation1d(nn.Module):
    """UpSample1d(2, 12) → act → DownSample1d(2, 12). Keys: act.*, upsample.filter, downsample.lowpass.filter."""

    def __init__(self, act, sinc='ltx'):
        super().__init__()
        self.act = act
        self.upsample = UpSample1d(2, 12, sinc=sinc)
        self.downsample = DownSample1d(2, 12, sinc=sinc)

    def forward(self, x):
        return self.downsample(self.act(self.upsample(x)))


def get_padding(k, d=1):
    return int((k * d - d) / 2)


class AMPBlock1(nn.Module):
    """ltx_core naming: convs1.{j}, convs2.{j}, acts1.{j}, acts2.{j}."""

    def __init__(self, c, k=3, dilation=(1, 3, 5), activation='snakebeta'):
        super().__init__()
        act_cls = SnakeBeta if activation == 'snakebeta' else Snake
        self.convs1 = nn.ModuleList([nn.Conv1d(c, c, k, 1, dilation=d, padding=get_padding(k, d)) for d in dilation])
        self.convs2 = nn.ModuleList([nn.Conv1d(c, c, k, 1, dilation=1, padding=get_padding(k, 1)) for _ in dilation])
        self.acts1 = nn.ModuleList([Activation1d(act_cls(c)) for _ in dilation])
        self.acts2 = nn.ModuleList([Activation1d(act_cls(c)) for _ in dilation])

    def forward(self, x):
        for c1, c2, a1, a2 in zip(self.convs1, self.convs2, self.acts1, self.acts2):
            x = x + c2(a2(c1(a1(x))))
        return x


class ResBlock1(nn.Module):
    """HiFi-GAN ResBlock1 (LTX-2 19B): LeakyReLU(0.1), 'same' padding."""

    def __init__(self, c, k=3, dilation=(1, 3, 5)):
        super().__init__()
        self.convs1 = nn.ModuleList([nn.Conv1d(c, c, k, 1, dilation=d, padding=get_padding(k, d)) for d in dilation])
        self.convs2 = nn.ModuleList([nn.Conv1d(c, c, k, 1, dilation=1, padding=get_padding(k, 1)) for _ in dilation])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = c1(F.leaky_relu(x, LRELU_SLOPE))
            xt = c2(F.leaky_relu(xt, LRELU_SLOPE))
            x = xt + x
        return x


class Vocoder(nn.Module):
    """ltx_core Vocoder: (B, 2, T, 64) → (B, 2, T·Πrates). resblock 'AMP1' (BigVGAN v2) or '1' (HiFi-GAN)."""

    def __init__(self, resblock_kernel_sizes=(3, 7, 11), upsample_rates=(6, 5, 2, 2, 2),
                 upsample_kernel_sizes=(16, 15, 8, 4, 4), resblock_dilation_sizes=((1, 3, 5),) * 3,
                 upsample_initial_channel=1024, resblock='1', output_sampling_rate=24000,
                 activation='snake', use_tanh_at_final=True, apply_final_activation=True,
                 use_bias_at_final=True, in_channels=128, out_channels=2):
        super().__init__()
        if resblock not in ('1', 'AMP1'):
            raise ValueError(f'vocoder resblock {resblock!r} not supported (expected "1" or "AMP1")')
        self.output_sampling_rate = output_sampling_rate
        self.num_kernels = len(resblock_kernel_sizes)
        self.num_upsamples = len(upsample_rates)
        self.use_tanh_at_final = use_tanh_at_final
        self.apply_final_activation = apply_final_activation
        self.is_amp = resblock == 'AMP1'
        c0 = upsample_initial_channel
        self.conv_pre = nn.Conv1d(in_channels, c0, 7, 1, padding=3)
        self.ups = nn.ModuleList(
            nn.ConvTranspose1d(c0 // 2 ** i, c0 // 2 ** (i + 1), k, u, padding=(k - u) // 2)
            for i, (u, k) in enumerate(zip(upsample_rates, upsample_kernel_sizes)))
        self.resblocks = nn.ModuleList()
        for i in range(len(upsample_rates)):
            ch = c0 // 2 ** (i + 1)
            for k, d in zip(resblock_kernel_sizes, resblock_dilation_sizes):
                self.resblocks.append(AMPBlock1(ch, k, tuple(d), activation) if self.is_amp else ResBlock1(ch, k, tuple(d)))
        final = c0 // 2 ** len(upsample_rates)
        self.act_post = Activation1d(SnakeBeta(final)) if self.is_amp else nn.LeakyReLU()  # default slope 0.01
        self.conv_post = nn.Conv1d(final, out_channels, 7, 1, padding=3, bias=use_bias_at_final)

    def forward(self, x, trace=None, name='stage_b'):
        """x: (B, 2, T, mel) → (B, 2, T·Πu)."""
        x = x.transpose(2, 3)  # (B, 2, mel, T)
        b, s, m, t = x.shape
        x = x.reshape(b, s * m, t)  # channel = s*mel + m
        x = self.conv_pre(x)
        _tr(trace, f'{name}.conv_pre', x)
        for i in range(self.num_upsamples):
            if not self.is_amp:
                x = F.leaky_relu(x, LRELU_SLOPE)
            x = self.ups[i](x)
            outs = torch.stack([self.resblocks[j](x) for j in range(i * self.num_kernels, (i + 1) * self.num_kernels)], 0)
            x = outs.mean(dim=0)
            _tr(trace, f'{name}.stage{i}', x)
        x = self.act_post(x)
        x = self.conv_post(x)
        _tr(trace, f'{name}.conv_post', x)
        if self.apply_final_activation:
            x = torch.tanh(x) if self.use_tanh_at_final else torch.clamp(x, -1, 1)
        return x


class _STFTFn(nn.Module):
    def __init__(self, filter_length, hop_length, win_length):
        super().__init__()
        self.hop_length, self.win_length = hop_length, win_length
        nf = filter_length // 2 + 1
        self.register_buffer('forward_basis', torch.zeros(nf * 2, 1, filter_length))
        self.register_buffer('inverse_basis', torch.zeros(nf * 2, 1, filter_length))

    def forward(self, y):
        """y: (N, L) → magnitude (N, n_freqs, frames); causal left pad win − hop, no epsilon."""
        y = y.unsqueeze(1)
        y = F.pad(y, (max(0, self.win_length - self.hop_length), 0))
        spec = F.conv1d(y, self.forward_basis.to(y.dtype), stride=self.hop_length)
        nf = spec.shape[1] // 2
        re, im = spec[:, :nf], spec[:, nf:]  # first half real, second half imaginary (code wins over docstring)
        return torch.sqrt(re ** 2 + im ** 2)


class MelSTFT(nn.Module):
    def __init__(self, filter_length, hop_length, win_length, n_mel_channels):
        super().__init__()
        self.stft_fn = _STFTFn(filter_length, hop_length, win_length)
        self.register_buffer('mel_basis', torch.zeros(n_mel_channels, filter_length // 2 + 1))

    def mel_spectrogram(self, y):
        mag = self.stft_fn(y)
        mel = torch.matmul(self.mel_basis.to(mag.dtype), mag)
        return torch.log(torch.clamp(mel, min=1e-5))


class VocoderWithBWE(nn.Module):
    def __init__(self, vocoder, bwe_generator, mel_stft, input_sampling_rate, output_sampling_rate, hop_length):
        super().__init__()
        self.vocoder, self.bwe_generator, self.mel_stft = vocoder, bwe_generator, mel_stft
        self.input_sampling_rate, self.output_sampling_rate = input_sampling_rate, output_sampling_rate
        self.hop_length = hop_length
        self.resampler = UpSample1d(ratio=output_sampling_rate // input_sampling_rate, persistent=False, window_type='hann')

    def forward(self, mel, trace=None):
        # the reference runs B and C in fp32 (autocast); promote_types keeps a float64 reference run in f64
        x = self.vocoder(mel.to(torch.promote_types(mel.dtype, torch.float32)), trace, 'stage_b')
        _tr(trace, 'stage_b.out', x)
        n = x.shape[-1]
        out_len = n * self.output_sampling_rate // self.input_sampling_rate
        rem = n % self.hop_length
        if rem:
            x = F.pad(x, (0, self.hop_length - rem))
        b, c, _ = x.shape
        lm = self.mel_stft.mel_spectrogram(x.reshape(b * c, -1))
        lm = lm.reshape(b, c, lm.shape[1], lm.shape[2])  # (B, 2, n_mels, F)
        _tr(trace, 'stage_c.log_mel', lm)
        residual = self.bwe_generator(lm.transpose(2, 3), trace, 'stage_c.bwe')
        _tr(trace, 'stage_c.residual', residual)
        skip = self.resampler(x)
        _tr(trace, 'stage_c.skip', skip)
        assert residual.shape == skip.shape, f'residual {tuple(residual.shape)} != skip {tuple(skip.shape)}'
        return torch.clamp(residual + skip, -1, 1)[..., :out_len]


# =============================================================================================
# Config handling and the whole decode (§1 version detection, §3)
# =============================================================================================

_VOC_KEYS = ('resblock_kernel_sizes', 'upsample_rates', 'upsample_kernel_sizes', 'resblock_dilation_sizes',
             'upsample_initial_channel', 'resblock', 'activation', 'use_tanh_at_final', 'use_bias_at_final')


def _check(cfg, key, expected, where):
    if cfg.get(key, '<missing>') != expected:
        raise ValueError(f'{where}.{key}: expected {expected!r}, got {cfg.get(key, "<missing>")!r}')


def _vocoder_kwargs(v):
    return {k: (list(v[k]) if isinstance(v[k], list) else v[k]) for k in _VOC_KEYS if k in v}


def is_ltx23(config):
    """Version rule: LTX-2.3/2.5 iff config['vocoder'] has a key 'bwe' (never by file name)."""
    return 'bwe' in config.get('vocoder', {})


def build_vocoder(vcfg):
    """config['vocoder'] → VocoderWithBWE (2.3) or Vocoder (2.0), as VocoderConfigurator does."""
    if 'bwe' in vcfg:
        main, bwe = vcfg['vocoder'], vcfg['bwe']
        for part, where in ((main, 'config.vocoder.vocoder'), (bwe, 'config.vocoder.bwe')):
            _check(part, 'resblock', 'AMP1', where)
            _check(part, 'stereo', True, where)
            _check(part, 'activation', 'snakebeta', where)
        voc = Vocoder(**_vocoder_kwargs(main), output_sampling_rate=bwe['input_sampling_rate'], apply_final_activation=True)
        gen = Vocoder(**_vocoder_kwargs(bwe), output_sampling_rate=bwe['output_sampling_rate'], apply_final_activation=False)
        mel = MelSTFT(bwe['n_fft'], bwe['hop_length'], bwe['n_fft'], bwe['num_mels'])  # win_size not read
        return VocoderWithBWE(voc, gen, mel, bwe['input_sampling_rate'], bwe['output_sampling_rate'], bwe['hop_length'])
    _check(vcfg, 'resblock', '1', 'config.vocoder')
    _check(vcfg, 'stereo', True, 'config.vocoder')
    kw = _vocoder_kwargs(vcfg)
    return Vocoder(**kw, output_sampling_rate=vcfg.get('output_sampling_rate', 24000))


class LtxAudioDecode(nn.Module):
    """latent (B, 8, T, 16) → waveform. state_dict() keys == checkpoint keys."""

    def __init__(self, config):
        super().__init__()
        self.config = copy.deepcopy(config)
        dd = config['audio_vae']['model']['params']['ddconfig']
        self.audio_vae = nn.Module()
        self.audio_vae.decoder = AudioDecoder(dd)
        self.latent_mel_bins = dd['mel_bins'] // LATENT_DOWNSAMPLE_FACTOR
        # ltx_core sizes the statistics with `ch`; they are applied per patchified feature, so the
        # length that must hold is z_channels * mel_bins/4 (= 128 = ch for every shipped config).
        self.audio_vae.per_channel_statistics = PerChannelStatistics(dd['z_channels'] * self.latent_mel_bins)
        self.vocoder = build_vocoder(config['vocoder'])
        self.has_bwe = isinstance(self.vocoder, VocoderWithBWE)

    @property
    def output_sampling_rate(self):
        return self.vocoder.output_sampling_rate

    def stage_a(self, latent, trace=None):
        dec = self.audio_vae.decoder
        if latent.dim() != 4 or latent.shape[1] != dec.z_channels or latent.shape[3] != self.latent_mel_bins:
            raise ValueError(f'latent: expected (B, {dec.z_channels}, T, {self.latent_mel_bins}), got {tuple(latent.shape)}')
        _, c, _, f = latent.shape
        z = unpatchify(self.audio_vae.per_channel_statistics.un_normalize(patchify(latent)), c, f)
        _tr(trace, 'stage_a.denorm', z)
        mel = dec(z, trace)
        _tr(trace, 'stage_a.out', mel)
        return mel

    def forward(self, latent, trace=None):
        mel = self.stage_a(latent, trace)
        if self.has_bwe:
            y = self.vocoder(mel, trace)
        else:
            y = self.vocoder(mel.to(torch.promote_types(mel.dtype, torch.float32)), trace, 'stage_b')
            _tr(trace, 'stage_b.out', y)
        _tr(trace, 'output', y)
        return y


def load_ltx(path_or_state, config=None, strict=True):
    """Build LtxAudioDecode from a safetensors checkpoint (config from __metadata__['config'])
    or from (state_dict, config). bf16 tensors are upcast to f32 exactly."""
    if isinstance(path_or_state, str):
        from . import io as lio
        state, meta = lio.load_safetensors(path_or_state)
        if config is None:
            if 'config' not in meta:
                raise ValueError(f'{path_or_state}: no "config" in the safetensors __metadata__')
            config = json.loads(meta['config'])
    else:
        state = path_or_state
    model = LtxAudioDecode(config)
    state = {k: torch.as_tensor(v).float() for k, v in state.items()
             if not k.startswith('audio_vae.encoder.')}
    own = model.state_dict()
    if not strict:
        # tolerate an absent (decode-unused) inverse STFT basis
        for k in own:
            if k.endswith('stft_fn.inverse_basis') and k not in state:
                state[k] = own[k]
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise KeyError(f'checkpoint mismatch: missing {missing[:20]}{"…" if len(missing) > 20 else ""}, '
                       f'unexpected {unexpected[:20]}{"…" if len(unexpected) > 20 else ""}')
    for k, v in state.items():
        if tuple(v.shape) != tuple(own[k].shape):
            raise ValueError(f'{k}: expected shape {tuple(own[k].shape)}, got {tuple(v.shape)}')
    model.load_state_dict(state, strict=True)
    return model.eval()
