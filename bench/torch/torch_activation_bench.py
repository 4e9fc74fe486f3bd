#!/usr/bin/python3
"""Times BigVGAN's torch Activation1d(SnakeBeta) chain (UpSample1d → SnakeBeta → DownSample1d, the
torch ops of alias_free_activation/torch, from tools/ltx_audio with BigVGAN's torch.sinc taps) on the shapes of
bench/micro/activation_bench.cc, 1 and 2 threads, and — given the meshnn_microbench binary — runs the fused
kernel in the same invocation and prints both with ratios.

Set-up: Debian torch 1.13, fp32, inference mode, glibc malloc told to keep freed memory
(MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=…, the 'best set-up' of docs/benchmarks.md;
BLAS choice does not matter here: these are depthwise convolutions, not GEMMs).

usage: /usr/bin/python3 bench/torch/torch_activation_bench.py [--meshnn-bench build/meshnn_microbench] [--reps 7]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

if os.environ.get("MALLOC_MMAP_MAX_") != "0":
    env = dict(os.environ, MALLOC_MMAP_MAX_="0", MALLOC_TRIM_THRESHOLD_="68719476736")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from ltx_audio import model as M  # noqa: E402

SHAPES = [(1536, 188), (768, 375), (384, 1500), (192, 3000), (96, 6000), (48, 12000), (24, 24000)]


def time_torch(C, T, threads, reps):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    snake = M.SnakeBeta(C, alpha_logscale=True)
    with torch.no_grad():
        snake.alpha.copy_(torch.randn(C) * 0.5)
        snake.beta.copy_(torch.randn(C) * 0.5)
    act = M.Activation1d(snake, sinc="torch").eval()
    x = torch.randn(1, C, T) * 2
    times = []
    with torch.inference_mode():
        act(x)
        for _ in range(reps):
            t0 = time.perf_counter()
            act(x)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_meshnn(binary, reps):
    out = subprocess.run([binary, "--benchmark_filter=BM_AaSnakeBetaFused", "--benchmark_format=json",
                          f"--benchmark_repetitions={reps}"], check=True, capture_output=True, text=True).stdout
    res = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        _, C, T, thr = b["run_name"].split("/")[:4]
        res[(int(C), int(T), int(thr))] = (b["real_time"] * 1e-6, b["cpu_time"] * 1e-6)  # µs → s
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshnn-bench", default=None)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    ours = run_meshnn(args.meshnn_microbench, args.reps) if args.meshnn_microbench else {}
    print(f"torch {torch.__version__}, {os.cpu_count()} cpus, fp32, median of {args.reps}")
    print("| C | T | threads | torch ms | meshnn fused ms | speed-up |")
    print("|---|---|---|---|---|---|")
    for threads in (1, 2):
        for C, T in SHAPES:
            tt = time_torch(C, T, threads, args.reps)
            if (C, T, threads) in ours:
                m = ours[(C, T, threads)][0]
                print(f"| {C} | {T} | {threads} | {tt * 1e3:.2f} | {m * 1e3:.3f} | {tt / m:.1f}× |")
            else:
                print(f"| {C} | {T} | {threads} | {tt * 1e3:.2f} | – | – |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
