#!/usr/bin/python3
"""Before / after: the PyTorch reference in tools/ltx_audio against meshnn, same weights, same
input, one process, alternating runs; prints medians, the speed-up and the PSNR between outputs.

  timing_vs_pytorch.py bigvgan MODEL [--seconds 1] [--repeat 5] [--threads 2]
  timing_vs_pytorch.py ltx (--checkpoint LTX.safetensors | --random) [--seconds 1] [--repeat 3]

MODEL: BigVGAN folder (config.json + bigvgan_generator.pt / .safetensors) or .safetensors.
--random builds a seeded random LTX-2.3 at the real size (both sides load the same weights).
Needs torch (Debian: python3-torch); run from a source checkout (imports tools/ltx_audio).
Timings on a shared machine are noisy: compare the two medians of one invocation.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

import meshnn
from meshnn._safetensors import load_safetensors, save_safetensors

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
from ltx_audio import bigvgan as BV, configs as C, model as M, randinit as R  # noqa: E402


def psnr_db(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    mse = np.mean((got - ref) ** 2)
    return float('inf') if mse == 0 else 10 * np.log10(np.max(np.abs(ref)) ** 2 / mse)


def alternate(fns, repeat, warmup=1):
    """fns: {name: callable} → ({name: [seconds]}, {name: last output}); runs interleaved."""
    times, outs = {k: [] for k in fns}, {}
    for i in range(warmup + repeat):
        for k, f in fns.items():
            t0 = time.perf_counter()
            outs[k] = f()
            if i >= warmup:
                times[k].append(time.perf_counter() - t0)
    return times, outs


def report(what, audio_s, times, outs, threads):
    t_ref, t_ours = statistics.median(times['pytorch']), statistics.median(times['meshnn'])
    ref = outs['pytorch'].numpy() if isinstance(outs['pytorch'], torch.Tensor) else outs['pytorch']
    res = {'model': what, 'audio_s': round(audio_s, 3), 'threads': threads,
           'pytorch_median_s': round(t_ref, 4), 'meshnn_median_s': round(t_ours, 4),
           'speedup': round(t_ref / t_ours, 2), 'psnr_db': round(psnr_db(outs['meshnn'], ref), 1),
           'load_avg_1m': round(os.getloadavg()[0], 2)}
    print(f'{what}: {audio_s:.2f} s of audio, PyTorch {t_ref:.3f} s → meshnn {t_ours:.3f} s '
          f'({res["speedup"]}x), PSNR {res["psnr_db"]} dB, load {res["load_avg_1m"]}')
    print(json.dumps(res))


def bigvgan(a):
    path = a.model
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    vocoder = meshnn.BigVGAN.from_pretrained(path)  # mesh "auto": one device per core
    h = dict(vocoder.h)
    if os.path.isdir(path):
        pt = os.path.join(path, 'bigvgan_generator.pt')
        st = os.path.join(path, 'bigvgan_generator.safetensors')
        path = st if os.path.isfile(st) else pt
    if path.endswith('.pt'):
        state = torch.load(path, map_location='cpu')
        state = state.get('generator', state)
    else:
        arrs, _ = load_safetensors(path)
        state = {k: torch.from_numpy(v) for k, v in arrs.items()
                 if not k.startswith(('input.', 'output', 'bigvgan.'))}
    model = BV.load_bigvgan(state, h)
    del folder
    frames = max(1, round(a.seconds * h['sampling_rate'] / h['hop_size']))
    g = torch.Generator().manual_seed(a.seed)
    wav = 0.3 * torch.randn(1, frames * h['hop_size'], generator=g)
    mel = BV.mel_from_config(wav, h).contiguous()

    def ref():
        with torch.inference_mode():
            return model(mel)

    times, outs = alternate({'pytorch': ref, 'meshnn': lambda: vocoder(mel)}, a.repeat)
    report('bigvgan', frames * h['hop_size'] / h['sampling_rate'], times, outs, a.threads)


def ltx(a):
    tmp = None
    if a.checkpoint:
        path = a.checkpoint
        model = M.load_ltx(path, strict=False)
    else:
        model = R.random_ltx(C.ltx23_config(), a.seed, bf16=True)
        fd, tmp = tempfile.mkstemp(suffix='.safetensors', prefix='meshnn_ltx_')
        os.close(fd)
        save_safetensors(tmp, {k: v.float().numpy() for k, v in model.state_dict().items()},
                         {'config': json.dumps(model.config)})
        path = tmp
    try:
        decoder = meshnn.LtxAudioDecoder.from_checkpoint(path)
    finally:
        if tmp:
            os.unlink(tmp)
    frames = max(1, round(25 * a.seconds))
    latent = torch.randn(1, 8, frames, 16, generator=torch.Generator().manual_seed(a.seed + 1))

    def ref():
        with torch.inference_mode():
            return model(latent)

    times, outs = alternate({'pytorch': ref, 'meshnn': lambda: decoder(latent)}, a.repeat)
    report(decoder.version, outs['meshnn'].shape[-1] / decoder.sample_rate, times, outs, a.threads)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='what', required=True)
    b = sub.add_parser('bigvgan')
    b.add_argument('model')
    l = sub.add_parser('ltx')  # noqa: E741
    l.add_argument('--checkpoint')
    l.add_argument('--random', action='store_true')
    for p in (b, l):
        p.add_argument('--seconds', type=float, default=1.0)
        p.add_argument('--repeat', type=int, default=3)
        p.add_argument('--threads', type=int, default=os.cpu_count(), help='PyTorch threads')
        p.add_argument('--seed', type=int, default=0)
        p.add_argument('--upsample-impl', choices=['convt', 'stuffed'], default='convt',
                       help='PyTorch anti-aliased upsampler: convt = grouped conv_transpose1d as '
                            'NVIDIA / ltx-core write it; stuffed = zero-stuff + depthwise conv1d, '
                            'same math, much faster in torch 1.13')
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    M.set_upsample_impl(a.upsample_impl)
    if a.what == 'ltx' and not (a.checkpoint or a.random):
        ap.error('ltx: give --checkpoint or --random')
    bigvgan(a) if a.what == 'bigvgan' else ltx(a)
    return 0


if __name__ == '__main__':
    sys.exit(main())
