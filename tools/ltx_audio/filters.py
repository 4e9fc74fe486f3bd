"""Fixed filters and bases: kaiser-sinc anti-aliasing taps, the Hann-sinc x3 resampler taps, the
Slaney mel filterbank (librosa.filters.mel without librosa) and a causal STFT basis.

References: ltx2_audio_decode.md §5.5, §6.2, §6.4; bigvgan.md §4, §8.
"""
import math

import numpy as np
import torch


def _sinc_ltx(x):
    # ltx_core's hand-written sinc (NVIDIA uses torch.sinc); may differ from torch.sinc in the last bit.
    return torch.where(x == 0, torch.tensor(1.0, dtype=x.dtype), torch.sin(math.pi * x) / math.pi / x)


def kaiser_sinc_filter1d(cutoff, half_width, kernel_size, sinc='ltx'):
    """(1, 1, K) float32 taps, bigvgan.md §4. sinc='ltx' (ltx_core) or 'torch' (NVIDIA/BigVGAN)."""
    even = kernel_size % 2 == 0
    half_size = kernel_size // 2
    delta_f = 4 * half_width
    amplitude = 2.285 * (half_size - 1) * math.pi * delta_f + 7.95
    if amplitude > 50.0:
        beta = 0.1102 * (amplitude - 8.7)
    elif amplitude >= 21.0:
        beta = 0.5842 * (amplitude - 21) ** 0.4 + 0.07886 * (amplitude - 21.0)
    else:
        beta = 0.0
    window = torch.kaiser_window(kernel_size, beta=beta, periodic=False)
    time = torch.arange(-half_size, half_size) + 0.5 if even else torch.arange(kernel_size) - half_size
    if cutoff == 0:
        filt = torch.zeros_like(time)
    else:
        s = _sinc_ltx(2 * cutoff * time) if sinc == 'ltx' else torch.sinc(2 * cutoff * time)
        filt = 2 * cutoff * window * s
        filt = filt / filt.sum()
    return filt.view(1, 1, kernel_size).float()


def hann_sinc_resampler_taps(ratio=3, rolloff=0.99, lowpass_filter_width=6):
    """Hann-windowed sinc taps of ltx_core's UpSample1d(window_type='hann'), §6.4.
    Returns (taps (1,1,K), pad, pad_left, pad_right). Not normalised, not in the checkpoint.
    Computed in float64 and rounded once, as meshnn computes them (ltx_core's float32 arithmetic
    differs in the last bit of some taps)."""
    width = math.ceil(lowpass_filter_width / rolloff)
    k = 2 * width * ratio + 1
    t = (torch.arange(k, dtype=torch.float64) / ratio - width) * rolloff
    tc = t.clamp(-lowpass_filter_width, lowpass_filter_width)
    window = torch.cos(tc * math.pi / lowpass_filter_width / 2) ** 2
    taps = (torch.sinc(t) * window * rolloff / ratio).view(1, 1, -1).float()
    return taps, width, 2 * width * ratio, k - ratio


# --- Slaney mel (librosa defaults: htk=False, norm='slaney') -------------------------------------

def _hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    f_sp = 200.0 / 3
    mels = f / f_sp
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-300) / min_log_hz) / logstep, mels)


def _mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp = 200.0 / 3
    freqs = f_sp * m
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    logstep = math.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), freqs)


def slaney_mel_filterbank(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    """(n_mels, n_fft//2+1) float32, = librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels,
    fmin=fmin, fmax=fmax) (Slaney scale, Slaney area norm). Computed in float64, rounded once."""
    if fmax is None:
        fmax = sr / 2.0
    fftfreqs = np.arange(n_fft // 2 + 1, dtype=np.float64) * sr / n_fft
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fftfreqs[None, :]
    w = np.zeros((n_mels, len(fftfreqs)), dtype=np.float64)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        w[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    w *= enorm[:, None]
    return w.astype(np.float32)


def causal_stft_bases(n_fft, win_length=None):
    """(forward_basis, inverse_basis), each (2*(n_fft//2+1), 1, n_fft) float32.

    ASSUMPTION (the real bases are only in the checkpoint, §6.2): forward rows 0..N/2 are
    cos(2πkn/N)·w[n] and rows N/2+1..N are −sin(2πkn/N)·w[n] with w the periodic Hann window
    (first half real, second half imaginary, as _STFTFn.forward reads them). The inverse basis
    (unused by decode) is the pseudo-inverse of the un-windowed forward basis times the window,
    in the style of the classic Tacotron-2 STFT module."""
    win_length = win_length or n_fft
    nf = n_fft // 2 + 1
    n = np.arange(n_fft)
    k = np.arange(nf)[:, None]
    fourier = np.vstack([np.cos(2 * np.pi * k * n / n_fft), -np.sin(2 * np.pi * k * n / n_fft)])
    win = np.zeros(n_fft)
    w = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(win_length) / win_length)
    off = (n_fft - win_length) // 2
    win[off:off + win_length] = w
    fwd = (fourier * win[None, :]).astype(np.float32)[:, None, :]
    inv = (np.linalg.pinv((n_fft / 1.0) * fourier).T * win[None, :] * n_fft).astype(np.float32)[:, None, :]
    return fwd, inv
