#!/bin/bash
# The filter cache's effect on load and first call (docs/benchmarks.md "Issue 34 (wave 18)"): one
# cold run (the cache folder emptied first), then cache off and warm alternating, 3 rounds, for
# LTX-2.3 fp32 and bf16 on CHECKPOINT + LATENT and BigVGAN v2 24 kHz fp32 (a random released-size
# checkpoint, the same seed each run). One line per run: load, call 1, steady, and the load average.
#   bench/filter_cache.sh BUILD_DIR CHECKPOINT LATENT CACHE_DIR
# (CHECKPOINT: `meshnn-bench first-call --write-checkpoint PATH`; LATENT: (1, 8, 50, 16) f32 .npy.)
set -euo pipefail
B=$1 CKPT=$2 LATENT=$3 CACHE=$4
echo "cpu: $("$B/meshnn" info | sed -n 2p)"
run() {  # model precision off|cold|warm
  local env=off
  [ "$3" != off ] && env="$CACHE/$1_$2"
  [ "$3" = cold ] && rm -rf "$CACHE/$1_$2"
  local args=(--model bigvgan --seconds 4)
  [ "$1" = ltx23 ] && args=(--model ltx23 --checkpoint "$CKPT" --latent "$LATENT")
  MESHNN_FILTER_CACHE=$env OMP_NUM_THREADS=2 "$B/meshnn-bench" first-call "${args[@]}" --calls 4 \
    --precision "$2" 2>&1 | grep -E "^load|^call 1|first / steady" | tr '\n' ' '
  echo " [$1 $2 $3, load average $(cut -d' ' -f1 /proc/loadavg)]"
}
for mp in "ltx23 fp32" "ltx23 bf16" "bigvgan fp32"; do
  read -r m p <<<"$mp"
  run "$m" "$p" cold
  for _ in 1 2 3; do
    run "$m" "$p" off
    run "$m" "$p" warm
  done
done
