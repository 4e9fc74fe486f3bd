#!/bin/bash
# Every benchmark against PyTorch on this machine, in one invocation (what `make bench` runs).
# Each section times meshnn and PyTorch in the same process tree, back to back, and prints
# medians and ratios; run it on a quiet machine (the load average is printed first).
#   tools/run_bench.sh [BUILD_DIR] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
threads=${2:-2}
py=/usr/bin/python3
echo "== meshnn benchmarks, $(date -u +%F\ %T) UTC, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/meshnn" info

echo; echo "== LTX-2.3 audio decode: meshnn vs PyTorch, mesh scaling"
"$build/meshnn-bench" audio --seconds 4 --threads "$threads"

echo; echo "== convolutions: meshnn (Google Benchmark) vs PyTorch, fp32, $threads threads"
ours=$(mktemp --suffix=.json)
trap 'rm -f "$ours"' EXIT
OMP_NUM_THREADS=$threads "$build/meshnn_microbench" --benchmark_filter='^(de)?conv_.*/fp32/' \
  --benchmark_repetitions=3 --benchmark_out="$ours" --benchmark_out_format=json >/dev/null
$py bench/torch/torch_conv_bench.py --threads "$threads" --ours "$ours"

echo; echo "== anti-aliased SnakeBeta activation: fused kernel vs PyTorch"
$py bench/torch/torch_activation_bench.py --meshnn-bench "$build/meshnn_microbench"

echo; echo "== GR00T VL adapter: meshnn vs PyTorch, released dims, 300 tokens"
$py bench/torch/torch_gr00t_bench.py --threads "$threads" --meshnn-bench "$build/meshnn_microbench"

echo; echo "== collectives: local vs MPI vs memcpy"
"$build/meshnn-bench" ccl

echo; echo "== NVIDIA BigVGAN v2 24 kHz: direct vs fast algorithms vs PyTorch"
"$build/meshnn-bench" vocode --threads "$threads"

echo; echo "== LTX-2.3: load time, first call vs steady state"
"$build/meshnn-bench" first-call --seconds 4

echo; echo "== streaming: throughput and per-push latency vs one shot, 1x2 pipeline"
"$build/meshnn-bench" stream --threads "$threads"
