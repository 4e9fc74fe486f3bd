#!/usr/bin/python3
"""PyTorch baseline for the LTX-2.3 audio decode (Stage A + B + C), full-size architecture.

  torch_audio_bench.py [--seconds 4] [--threads 2] [--repeat 3] [--warmup 1] [--seed 0]
                       [--checkpoint C.safetensors] [--latent L.npy] [--out Y.npy] [--stages]

Builds a seeded random LTX-2.3 checkpoint in memory (the same weights make_checkpoint.py writes for
that seed, bf16-representable) unless --checkpoint is given. The latent is seeded random
(1, 8, round(25·seconds), 16) unless --latent is given (.npy, f32, (B, 8, T, 16) or (8, T, 16)).
--out writes the decoded waveform (B, 2, 480·(4T−3)) as f32 .npy, so the C++ bench can compare outputs.
Prints one JSON line: median / min / all wall times, median process CPU time (all threads), real-time
factor (wall time / audio seconds), peak RSS, and the 1-minute load average (timings on a shared
machine are only meaningful when it is close to the thread count).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
from ltx_audio import configs as C, model as M, randinit as R  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seconds', type=float, default=4.0)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--checkpoint')
    ap.add_argument('--latent')
    ap.add_argument('--out')
    ap.add_argument('--stages', action='store_true', help='also time stages A / B / C separately (one run)')
    ap.add_argument('--upsample-impl', choices=['convt', 'stuffed'], default='convt',
                    help='convt: grouped conv_transpose1d as ltx_core/NVIDIA (default, the golden path); '
                         'stuffed: zero-stuff + depthwise conv1d, same math, much faster in torch 1.13')
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    M.set_upsample_impl(a.upsample_impl)
    t0 = time.perf_counter()
    if a.checkpoint:
        model = M.load_ltx(a.checkpoint, strict=False)
    else:
        model = R.random_ltx(C.ltx23_config(), a.seed, bf16=True)
    if not model.has_bwe:
        print('note: checkpoint is LTX-2 (no BWE); timing the HiFi-GAN path', file=sys.stderr)
    build_s = time.perf_counter() - t0
    if a.latent:
        lat = torch.from_numpy(np.load(a.latent).astype(np.float32))
        if lat.dim() == 3:
            lat = lat.unsqueeze(0)
    else:
        frames = max(1, round(a.seconds * 25))
        lat = torch.randn(1, 8, frames, 16, generator=torch.Generator().manual_seed(a.seed + 1))
    if not torch.isfinite(lat).all():
        bad = torch.nonzero(~torch.isfinite(lat))[0].tolist()
        sys.exit(f'latent: non-finite value at index {bad}')
    t_lat = lat.shape[2]
    m = max(4 * t_lat - 3, 1)
    audio_s = m * 160 / 16000
    times, cpu, y = [], [], None
    with torch.inference_mode():
        for i in range(a.warmup + a.repeat):
            s, c = time.perf_counter(), time.process_time()
            y = model(lat)
            e, ce = time.perf_counter() - s, time.process_time() - c
            if i >= a.warmup:
                times.append(e)
                cpu.append(ce)
        stage_times = None
        if a.stages and model.has_bwe:
            s = time.perf_counter(); mel = model.stage_a(lat); ta = time.perf_counter() - s
            s = time.perf_counter(); x = model.vocoder.vocoder(mel); tb = time.perf_counter() - s
            s = time.perf_counter(); model.vocoder(mel); tbc = time.perf_counter() - s
            stage_times = {'stage_a_s': ta, 'stage_b_s': tb, 'stage_c_s': max(tbc - tb, 0.0)}
    if a.out:
        np.save(a.out, y.float().numpy())
    med = statistics.median(times)
    res = {'impl': 'pytorch', 'torch': torch.__version__, 'model': 'ltx23' if model.has_bwe else 'ltx2',
           'threads': a.threads, 'latent_frames': t_lat, 'mel_frames': m, 'audio_seconds': audio_s,
           'output_shape': list(y.shape), 'output_rate': model.output_sampling_rate,
           'upsample_impl': a.upsample_impl, 'median_s': med, 'min_s': min(times), 'times_s': times,
           'rtf': med / audio_s, 'median_cpu_s': statistics.median(cpu),
           'load_avg_1m': os.getloadavg()[0],
           'build_s': build_s, 'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
           'output_absmax': float(y.abs().max()), 'output_std': float(y.std())}
    if stage_times:
        res.update(stage_times)
    print(json.dumps(res))
    return 0


if __name__ == '__main__':
    sys.exit(main())
