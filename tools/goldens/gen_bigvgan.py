#!/usr/bin/python3
"""Golden fixtures for NVIDIA BigVGAN generators and the meldataset.py mel front end
(tools/ltx_audio/bigvgan.py), reduced-width variants of the released configs with seeded random weights.

Usage: gen_bigvgan.py OUT_DIR. Writes (layout documented in docs/models.md):
  bigvgan_v2_24k_small.safetensors    v2 24 kHz structure (rates [4,4,2,2,2,2]), NVIDIA keys with
                                      weight_g/weight_v; input.mel = front end of input.wav; stage outputs
  bigvgan_v2_44k_small.safetensors    v2 44 kHz 512x structure (rates [8,4,2,2,2,2]), FOLDED `weight` keys
  bigvgan_base_24k_small.safetensors  v1/base structure (4 stages, conv_post bias, tanh), weight_g/weight_v
  bigvgan_mel_frontend.safetensors    mel front end on short wavs for three configs, plus one filterbank
Weights are stored BF16 (values exactly bf16-representable; upcast exactly) except the kaiser filter
buffers (F32, exact taps); activations F32.
Config JSON of each generator is in __metadata__["config"].
"""
import os

# Deterministic reductions: one thread for torch, OpenMP and BLAS, set before torch / numpy load
# (torch.set_num_threads alone is not enough: oneDNN picks other kernels, OpenBLAS pinv differs).
for _v in ('OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'):
    os.environ[_v] = '1'

import json  # noqa: E402
import math
import sys  # noqa: E402

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
sys.path.insert(0, HERE)
import st  # noqa: E402
from ltx_audio import bigvgan as BV, configs as C, filters, randinit as R  # noqa: E402

SEED = 20240709


def test_wav(n, sr, seed):
    """Deterministic test signal: two chirps + a decaying tone + noise, peak ~0.6."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(n, dtype=torch.float64) / sr
    dur = n / sr
    y = 0.25 * torch.sin(2 * math.pi * (200 * t + 0.5 * (sr / 4 - 200) / dur * t ** 2))
    y += 0.15 * torch.sin(2 * math.pi * (3000 * t - 0.5 * 2000 / dur * t ** 2))
    y += 0.1 * torch.exp(-3 * t / dur) * torch.sin(2 * math.pi * 440 * t)
    y += 0.03 * torch.randn(n, generator=g, dtype=torch.float64)
    return y.float().unsqueeze(0)


def gen_generator(out_dir, fname, cfg_name, frames, seed, fold):
    h = C.bigvgan_config(cfg_name, small=True)
    model = R.random_bigvgan(h, seed, bf16=True)  # weight_g / weight_v rounded to bf16
    if fold:
        model.remove_weight_norm()  # folded in f32, then stored bf16 → round again so file == model
        R.round_to_bf16_(model, params_only=True)
    wav = test_wav(frames * h['hop_size'], h['sampling_rate'], seed + 1)
    mel = BV.mel_from_config(wav, h)
    assert mel.shape == (1, h['num_mels'], frames)
    tr = {}
    with torch.no_grad():
        out = model(mel, tr)
    assert out.shape == (1, 1, frames * math.prod(h['upsample_rates']))
    # parameters bf16 (exactly representable), filter buffers f32 (exact kaiser taps, as NVIDIA stores them)
    t = {k: (v.detach().float() if k.endswith('.filter') else v.detach().to(torch.bfloat16))
         for k, v in model.state_dict().items()}
    t['input.wav'] = wav
    t['input.mel'] = mel
    t.update({k: v.contiguous() for k, v in tr.items()})
    t['output'] = out
    for k, v in t.items():
        assert torch.isfinite(v.float()).all(), k
    st.save(os.path.join(out_dir, fname), t,
            {'config': json.dumps(h, sort_keys=True), 'released_config': cfg_name, 'weight_norm': str(not fold).lower(),
             'generator': 'tools/goldens/gen_bigvgan.py', 'seed': str(seed)})
    return t


def gen_frontend(out_dir):
    t = {}
    cases = [('v2_24k', C.bigvgan_config('bigvgan_v2_24khz_100band_256x'), 16),
             ('v2_44k_512x', C.bigvgan_config('bigvgan_v2_44khz_128band_512x'), 8),
             ('v1_22k_fmax8k', C.bigvgan_config('bigvgan_22khz_80band'), 12)]
    meta = {}
    for i, (name, h, frames) in enumerate(cases):
        wav = test_wav(frames * h['hop_size'] + 37, h['sampling_rate'], SEED + 10 + i)  # not a hop multiple
        mel = BV.mel_from_config(wav, h)
        assert mel.shape[-1] == wav.shape[-1] // h['hop_size']
        t[f'{name}.input.wav'] = wav
        t[f'{name}.output.mel'] = mel
        meta[name] = {k: h[k] for k in ('n_fft', 'num_mels', 'sampling_rate', 'hop_size', 'win_size', 'fmin', 'fmax')}
    # one filterbank on its own (small: sr 16000, n_fft 256, 20 mels, fmax 8000)
    t['filterbank.sr16000_nfft256_mels20_fmax8000'] = torch.from_numpy(filters.slaney_mel_filterbank(16000, 256, 20, 0, 8000))
    st.save(os.path.join(out_dir, 'bigvgan_mel_frontend.safetensors'), t,
            {'configs': json.dumps(meta, sort_keys=True), 'generator': 'tools/goldens/gen_bigvgan.py'})


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: gen_bigvgan.py OUT_DIR')
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    files = [('bigvgan_v2_24k_small.safetensors', 'bigvgan_v2_24khz_100band_256x', 6, SEED, False),
             ('bigvgan_v2_44k_small.safetensors', 'bigvgan_v2_44khz_128band_512x', 4, SEED + 2, True),
             ('bigvgan_base_24k_small.safetensors', 'bigvgan_base_24khz_100band', 6, SEED + 4, False)]
    for f in files:
        gen_generator(out_dir, *f)
    gen_frontend(out_dir)
    for f in [x[0] for x in files] + ['bigvgan_mel_frontend.safetensors']:
        print(f'  {f} {os.path.getsize(os.path.join(out_dir, f)) / 1024:.0f} KiB')


if __name__ == '__main__':
    main()
