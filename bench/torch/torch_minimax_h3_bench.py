#!/usr/bin/python3
"""Time the tools/ PyTorch MiniMax-H3 audio VAE reference (fp32) on one input, in its best set-up
(the zero-stuffed x2 upsampler, weight norm folded, no autograd), and print one JSON line:
load / call wall seconds, process CPU seconds of the call, peak RSS. Used beside `meshnn
audio-decode` / `audio-encode` by bench/torch/h3_vs_torch.sh so both are timed in one invocation.

  torch_minimax_h3_bench.py decode FOLDER latent.npy [--threads 2] [--out y.npy]
  torch_minimax_h3_bench.py encode FOLDER wave.npy   [--threads 2] [--out z.npy]
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools'))
from ltx_audio import model as ltx_model  # noqa: E402
from minimax_h3 import model as h3  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('direction', choices=['decode', 'encode'])
    ap.add_argument('folder')
    ap.add_argument('input', help='.npy: latents (B, 32, T) for decode, wave (B, 1, L) for encode')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--out', help='write the output (.npy) for an accuracy check')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ltx_model.set_upsample_impl('stuffed')  # the faster of the reference's two upsamplers here
    t0 = time.perf_counter()
    m = h3.load_folder(a.folder)
    m.fold_weight_norm()  # a folder stored with weight norm unfolded: fold it once, as meshnn does
    load_s = time.perf_counter() - t0
    x = torch.from_numpy(np.load(a.input).astype(np.float32))
    c0, t1 = time.process_time(), time.perf_counter()
    with torch.inference_mode():
        y = m.decode(x) if a.direction == 'decode' else m.encode(x)
    if isinstance(y, (tuple, list)):
        y = y[0]
    call_s, call_cpu = time.perf_counter() - t1, time.process_time() - c0
    if a.out:
        np.save(a.out, y.numpy())
    print(json.dumps({'impl': 'torch', 'direction': a.direction, 'load_s': round(load_s, 3),
                      'call_s': round(call_s, 3), 'call_cpu_s': round(call_cpu, 3),
                      'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))


if __name__ == '__main__':
    main()
