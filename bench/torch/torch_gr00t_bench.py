#!/usr/bin/python3
"""PyTorch timing of the GR00T VL adapter (N1.5 with 4 VL-SA blocks, N1.6 without) on 300 tokens
at the released dims, the same thread count as meshnn, and the ratio, in one invocation.

The torch side is tools/gr00t_ref/adapter.py:adapter_forward (the golden reference) on a
seeded random checkpoint, f32 and (unless --no-torch-bf16) bf16 weights and activations. The meshnn
side is bench/micro/gr00t_bench.cc, run as a subprocess with the same OMP_NUM_THREADS.

usage: /usr/bin/python3 bench/torch/torch_gr00t_bench.py --threads 2 --meshnn-bench build/meshnn_microbench
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tools'))
from gr00t_ref import adapter as g  # noqa: E402

TOKENS = 300


def torch_median(version, reps, dtype):
    c = g.default_config(version)
    W = {k: v.to(dtype) for k, v in g.random_checkpoint(c, 1234).items()}
    types = torch.zeros(TOKENS, dtype=torch.int64)
    types[4:260] = 1
    D = c['backbone_embedding_dim']
    x = (torch.arange(TOKENS * D, dtype=torch.float32).reshape(TOKENS, D) % 201 - 100).to(dtype) * 0.02
    s = torch.arange(c['max_state_dim'], dtype=torch.float32).to(dtype) % 7 * 0.1
    with torch.inference_mode():
        g.adapter_forward(c, W, x, types, s, 3)  # warm-up
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            g.adapter_forward(c, W, x, types, s, 3)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def meshnn_medians(bench, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([bench, '--benchmark_filter=gr00t_', '--benchmark_format=json'], env=env,
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for b in json.loads(out)['benchmarks']:
        if b.get('aggregate_name') == 'median':
            key = b['run_name'].split('/iterations')[0]  # "gr00t_n1.5_S300/fp32/iterations:1/..."
            res[key] = b['real_time'] if b['time_unit'] == 'ms' else b['real_time'] / 1e6
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--meshnn-bench', default=None, help='path to meshnn_microbench (omit: torch only)')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--no-torch-bf16', action='store_true',
                    help='skip timing torch with bf16 weights and activations (about 2 min)')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ours = meshnn_medians(a.meshnn_microbench, a.threads) if a.meshnn_microbench else {}
    print(f'threads {a.threads}, torch {torch.__version__}, {TOKENS} tokens')
    print(f'{"case":<28}{"torch ms":>12}{"meshnn ms":>12}{"speed-up":>10}')
    for version in ('n1.5', 'n1.6'):
        t32 = torch_median(version, a.reps, torch.float32)
        # torch's bf16 matmul has no fast kernel below avx512_bf16 and takes ~100 s for N1.5 here,
        # so one timed run is enough for its ratio.
        tb = None if a.no_torch_bf16 else torch_median(version, 1, torch.bfloat16)
        for prec in ('fp32', 'bf16'):
            key = f'gr00t_{version}_S{TOKENS}/{prec}'
            m = ours.get(key)
            refs = [('torch f32', t32)]
            if prec == 'bf16' and tb is not None:
                refs.insert(0, ('torch bf16', tb))  # like for like first
            for ref_name, ref in refs:
                ratio = f'{ref / m:9.2f}x' if m else '      n/a'
                print(f'{key:<28}{ref:>12.1f}{(m or float("nan")):>12.1f}{ratio:>10}   (vs {ref_name})')

if __name__ == '__main__':
    main()
