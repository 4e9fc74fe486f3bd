#!/usr/bin/python3
"""Whole GR00T get_action (VL adapter + flow-matching action head, 4 Euler steps) at the released
dims on 300 VL tokens: the PyTorch reference (tools/gr00t_ref/action_head.py on top of
gr00t_ref/adapter.py: adapter_forward) against meshnn (bench/micro/gr00t_policy_bench.cc, run as a
subprocess with the same OMP_NUM_THREADS), medians and the ratio in one invocation, latency per
call and per step.

The torch reference is the upstream computation: the cross K/V are projected from the VL tokens
in every cross block at every step (key masks for N1.6 / N1.7), the t-only vectors every step.
`--torch-cache-kv` also times it with the K/V cached per call (what meshnn does).

usage: /usr/bin/python3 bench/torch/torch_gr00t_policy_bench.py --threads 2 --meshnn-bench build/meshnn_microbench
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
from gr00t_ref import action_head as ah  # noqa: E402

TOKENS = 300
STEPS = 4


def torch_times(version, reps, cache_kv):
    c = ah.add_head_config(g.default_config(version))
    c['max_num_embodiments'] = 1  # one slice, as the meshnn case
    W = g.random_checkpoint(c, 1234, head=True)
    types = torch.zeros(TOKENS, dtype=torch.int64)
    types[4:260] = 1
    D = c['backbone_embedding_dim']
    x = (torch.arange(TOKENS * D, dtype=torch.float32).reshape(TOKENS, D) % 201 - 100) * 0.02
    s = torch.arange(c['max_state_dim'], dtype=torch.float32) % 7 * 0.1
    noise = torch.randn(c['action_horizon'], c['action_dim'], generator=torch.Generator().manual_seed(5))

    def call():
        t0 = time.perf_counter()
        ad = g.adapter_forward(c, W, x, types, s, 0)
        t1 = time.perf_counter()
        ah.get_action(c, W, ad['dit_encoder_hidden_states'], types, ad['state_features'], 0, noise, STEPS,
                      cache_kv=cache_kv)
        t2 = time.perf_counter()
        return (t2 - t0) * 1e3, (t1 - t0) * 1e3, (t2 - t1) / STEPS * 1e3

    with torch.inference_mode():
        call()  # warm-up
        r = [call() for _ in range(reps)]
    del W
    return tuple(statistics.median(v[i] for v in r) for i in range(3))


def meshnn_times(bench, threads, versions, precisions):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    filt = ('gr00t_policy_(' + '|'.join(v.replace('.', '\\.') for v in versions) + ')_.*/(' +
            '|'.join(precisions) + ')/')
    out = subprocess.run([bench, '--benchmark_filter=' + filt, '--benchmark_format=json'], env=env,
                         check=True, capture_output=True, text=True).stdout
    res = {}
    for b in json.loads(out)['benchmarks']:
        key = b['run_name'].split('/iterations')[0].split('/manual_time')[0]
        res[key] = (b['call_ms'], b['adapter_ms'], b['step_ms'])
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--meshnn-bench', default=None, help='path to meshnn_microbench (omit: torch only)')
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--versions', default='n1.5,n1.7')
    ap.add_argument('--torch-cache-kv', action='store_true', help='also time torch with cached cross K/V')
    ap.add_argument('--precisions', default='fp32,bf16')
    ap.add_argument('--rounds', type=int, default=1,
                    help='alternate meshnn and torch this many times per version (shared machines: '
                         'load swings over minutes, so one round can be off by several x)')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    precs = a.precisions.split(',')
    print(f'threads {a.threads}, torch {torch.__version__}, {TOKENS} VL tokens, {STEPS} steps')
    print(f'{"case":<34}{"side":<22}{"call ms":>10}{"adapter ms":>12}{"step ms":>10}{"speed-up":>10}  load')
    for version in a.versions.split(','):
        ratios = {p: [] for p in precs}
        for rnd in range(a.rounds):
            ours = meshnn_times(a.meshnn_microbench, a.threads, [version], precs) if a.meshnn_microbench else {}
            refs = [('torch f32', torch_times(version, a.reps, False))]
            if a.torch_cache_kv:
                refs.append(('torch f32 cached K/V', torch_times(version, a.reps, True)))
            load = f'{os.getloadavg()[0]:.1f}'
            for prec in precs:
                key = f'gr00t_policy_{version}_S{TOKENS}_K{STEPS}/{prec}'
                m = ours.get(key)
                if m:
                    print(f'{key:<34}{"meshnn " + prec:<22}{m[0]:>10.1f}{m[1]:>12.1f}{m[2]:>10.1f}{"":>10}  {load}')
                for name, t in refs:
                    ratio = f'{t[0] / m[0]:9.2f}x' if m else '      n/a'
                    if m and name == 'torch f32':
                        ratios[prec].append(t[0] / m[0])
                    print(f'{key:<34}{name:<22}{t[0]:>10.1f}{t[1]:>12.1f}{t[2]:>10.1f}{ratio:>10}  {load}')
        for prec, r in ratios.items():
            if len(r) > 1:
                print(f'{version} {prec}: speed-up vs torch f32 per round {["%.2f" % x for x in r]}, '
                      f'median {statistics.median(r):.2f}x')


if __name__ == '__main__':
    main()
