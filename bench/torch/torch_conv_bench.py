#!/usr/bin/python3
"""PyTorch timing of the conv shapes in bench/micro/conv_bench.cc, same thread count, and the ratio.

Keys (shared with the C++ benchmark):
  conv_ci<C_in>_co<C_out>_k<K>_s<stride>_d<dilation>_T<T>   torch.nn.Conv1d, padding (eff_k)//2
  deconv_ci<C_in>_co<C_out>_k<K>_s<stride>_T<T>            torch.nn.ConvTranspose1d, padding (k-s)//2
torch runs in its native (B, C, T) layout with a preallocated output (out= is not available for
conv, so torch allocates per call — that is PyTorch's real cost and part of what we compare).

usage:
  OMP_NUM_THREADS=2 meshnn_microbench --benchmark_filter='fp32|tap|bf16' --benchmark_format=json > ours.json
  /usr/bin/python3 bench/torch/torch_conv_bench.py --threads 2 --ours ours.json
"""
import argparse
import json
import re
import time

import torch

KEYS = [
    "conv_ci128_co1536_k7_s1_d1_T400", "conv_ci768_co768_k3_s1_d1_T2000",
    "conv_ci768_co768_k7_s1_d3_T2000", "conv_ci768_co768_k11_s1_d5_T2000",
    "conv_ci384_co384_k7_s1_d3_T4000", "conv_ci192_co192_k7_s1_d3_T8000",
    "conv_ci96_co96_k7_s1_d3_T16000", "conv_ci96_co96_k11_s1_d5_T16000",
    "conv_ci48_co48_k7_s1_d3_T32000", "conv_ci24_co24_k3_s1_d1_T64000",
    "conv_ci24_co24_k7_s1_d3_T64000", "conv_ci24_co24_k11_s1_d5_T64000",
    "conv_ci24_co2_k7_s1_d1_T64000", "conv_ci24_co24_k7_s1_d1_T64000",
    "conv_ci128_co128_k7_s1_d3_T24000", "conv_ci32_co32_k7_s1_d3_T96000",
    "conv_ci16_co16_k11_s1_d5_T192000",
    "deconv_ci1536_co768_k11_s5_T400", "deconv_ci768_co384_k4_s2_T2000",
    "deconv_ci96_co48_k4_s2_T16000", "deconv_ci48_co24_k4_s2_T32000",
    "deconv_ci512_co256_k12_s6_T400",
]


def parse(key):
    m = re.match(r"conv_ci(\d+)_co(\d+)_k(\d+)_s(\d+)_d(\d+)_T(\d+)$", key)
    if m:
        ci, co, k, s, d, t = map(int, m.groups())
        return False, ci, co, k, s, d, t
    m = re.match(r"deconv_ci(\d+)_co(\d+)_k(\d+)_s(\d+)_T(\d+)$", key)
    ci, co, k, s, t = map(int, m.groups())
    return True, ci, co, k, s, 1, t


def time_key(key, min_time=0.3):
    deconv, ci, co, k, s, d, t = parse(key)
    if deconv:
        m = torch.nn.ConvTranspose1d(ci, co, k, stride=s, padding=(k - s) // 2)
        flop = 2.0 * ci * co * k * t  # = 2·T_out·C_out·C_in·K / s
    else:
        eff = (k - 1) * d + 1
        m = torch.nn.Conv1d(ci, co, k, stride=s, dilation=d, padding=eff // 2)
        t_out = (t + 2 * (eff // 2) - eff) // s + 1
        flop = 2.0 * t_out * co * ci * k
    m.eval()
    x = torch.rand(1, ci, t) * 2 - 1
    with torch.no_grad():
        for _ in range(2):
            m(x)
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < min_time or len(times) < 3:
            t0 = time.perf_counter()
            m(x)
            times.append(time.perf_counter() - t0)
    times.sort()
    med = times[len(times) // 2]
    return med * 1e3, flop / med * 1e-9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ours", help="meshnn_microbench --benchmark_format=json output")
    ap.add_argument("--keys", nargs="*", help="only these shape keys (default: all)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ours = {}
    if args.ours:
        medians = {}
        for b in json.load(open(args.ours))["benchmarks"]:
            name = b["name"].split("/min_time")[0]
            if b.get("run_type", "iteration") == "iteration":
                ours[name] = (b["real_time"], b.get("GFLOP/s", 0.0))
            elif b.get("aggregate_name") == "median":  # --benchmark_repetitions: use the median
                medians[name] = (b["real_time"], b.get("GFLOP/s", 0.0))
        ours.update(medians)
    print(f"torch {torch.__version__}, threads {args.threads}")
    print("| shape | torch ms | torch GFLOP/s | meshnn fp32 ms | GFLOP/s | speed vs torch | best lever | ms | vs torch |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in args.keys or KEYS:
        tms, tg = time_key(key)
        row = f"| {key} | {tms:.2f} | {tg:.1f} |"
        if f"{key}/fp32" in ours:
            oms, og = ours[f"{key}/fp32"]
            row += f" {oms:.2f} | {og:.1f} | {tms / oms:.2f}x |"
            alts = [(v[0], n.split('/')[1]) for n, v in ours.items()
                    if n.startswith(key + "/") and not n.endswith("/fp32")]
            if alts:
                ams, an = min(alts)
                row += f" {an} | {ams:.2f} | {tms / ams:.2f}x |"
            else:
                row += " | | |"
        else:
            row += " | | | | | |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
