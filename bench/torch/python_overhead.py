#!/usr/bin/python3
"""Per-call overhead of the Python module over the C++ call it wraps, BigVGAN vocode.

  PYTHONPATH=build/python bench/torch/python_overhead.py MODEL [--seconds 1] [--repeat 11]
      [--mesh auto] [--threads 0] [--tiny-repeat 300]

MODEL: BigVGAN folder or .safetensors (a full-size random one: tools/make_checkpoint.py bigvgan
DIR --config bigvgan_v2_24khz_100band_256x). One process, same weights and input; each round runs
  python: vocoder(mel) from Python (numpy in, numpy out: conversion, GIL release, output wrap),
  torch:  vocoder(torch_mel, as_torch=True) (DLPack in, torch.from_numpy out),
  c++:    the same AudioModel::run call timed inside C++ (_native_run_seconds),
in an order that rotates every round; prints medians, the median of the paired differences and
the overhead in % of the C++ call. A tiny input (1 frame, one device, one thread) repeated
--tiny-repeat times gives the fixed cost per call in microseconds.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import meshnn


def rounds(fns, repeat, warmup):
    names = list(fns)
    t = {k: [] for k in names}
    for i in range(warmup + repeat):
        order = names[i % len(names):] + names[:i % len(names)]
        for k in order:
            s = fns[k]()
            if i >= warmup:
                t[k].append(s)
    return t


def timed(f):
    def g():
        t0 = time.perf_counter()
        f()
        return time.perf_counter() - t0
    return g


def summary(t, base='c++'):
    med = {k: statistics.median(v) for k, v in t.items()}
    out = {'median_s': med, 'times_s': {k: [round(x, 6) for x in v] for k, v in t.items()}}
    for k in t:
        if k == base:
            continue
        diffs = [a - b for a, b in zip(t[k], t[base])]
        out[k + '_minus_cpp_median_s'] = statistics.median(diffs)
        out[k + '_overhead_pct'] = 100 * statistics.median(diffs) / med[base]
        out[k + '_medians_ratio_pct'] = 100 * (med[k] / med[base] - 1)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('--seconds', type=float, default=1.0)
    ap.add_argument('--repeat', type=int, default=11)
    ap.add_argument('--warmup', type=int, default=2)
    ap.add_argument('--mesh', default='auto')
    ap.add_argument('--threads', type=int, default=0)
    ap.add_argument('--tiny-repeat', type=int, default=300)
    a = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None

    v = meshnn.BigVGAN.from_pretrained(a.model, mesh=a.mesh, threads=a.threads or None)
    frames = max(1, round(a.seconds * v.sample_rate / v.hop_length))
    mel = np.random.default_rng(0).standard_normal((1, v.num_mels, frames), np.float32) - 4
    fns = {'python': timed(lambda: v(mel)),
           'c++': lambda: v.audio_model._native_run_seconds(mel, a.mesh, a.threads, 1)[0]}
    if torch is not None:
        tm = torch.from_numpy(mel.copy())
        fns['torch'] = timed(lambda: v(tm, as_torch=True))
    full = rounds(fns, a.repeat, a.warmup)

    tiny = np.random.default_rng(1).standard_normal((1, v.num_mels, 1), np.float32) - 4
    tfns = {'python': timed(lambda: v(tiny, mesh='1x1', threads=1)),
            'c++': lambda: v.audio_model._native_run_seconds(tiny, '1x1', 1, 1)[0]}
    if torch is not None:
        tt = torch.from_numpy(tiny.copy())
        tfns['torch'] = timed(lambda: v(tt, mesh='1x1', threads=1, as_torch=True))
    small = rounds(tfns, a.tiny_repeat, 20)

    res = {'model': os.path.basename(os.path.normpath(a.model)), 'frames': frames,
           'audio_s': frames * v.hop_length / v.sample_rate, 'mesh': a.mesh,
           'repeat': a.repeat, 'full': summary(full), 'tiny_1_frame': summary(small),
           'load_avg_1m': os.getloadavg()[0]}
    f, s = res['full'], res['tiny_1_frame']
    print(f'{res["audio_s"]:.2f} s vocode ({frames} frames, mesh {a.mesh}): C++ '
          f'{f["median_s"]["c++"]:.4f} s, Python {f["median_s"]["python"]:.4f} s; overhead: medians '
          f'{f["python_medians_ratio_pct"]:+.2f} %, median of paired differences '
          f'{f["python_overhead_pct"]:+.2f} %'
          + (f', torch in/out {f["torch_overhead_pct"]:+.2f} %' if 'torch_overhead_pct' in f else ''))
    print(f'fixed cost per call (1 frame, 1x1, 1 thread): '
          f'{1e6 * s["python_minus_cpp_median_s"]:.1f} us (numpy), '
          + (f'{1e6 * s["torch_minus_cpp_median_s"]:.1f} us (torch) ' if 'torch' in tfns else '')
          + f'over a {1e3 * s["median_s"]["c++"]:.2f} ms C++ call; load average {res["load_avg_1m"]:.2f}')
    print(json.dumps(res))
    return 0


if __name__ == '__main__':
    sys.exit(main())
