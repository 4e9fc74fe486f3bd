#!/bin/bash
# Two builds' load and first call side by side (docs/benchmarks.md "Issue 34 (wave 19)"): each
# build gets its own cache folder, written by its own cold run (so the page-cache state of its
# entries is the one that build leaves), then warm runs alternate between the builds, ROUNDS
# rounds, on CHECKPOINT + LATENT. A build is a folder holding meshnn, meshnn-bench and libmeshnn.so.0
# (copied from a build tree; LD_LIBRARY_PATH picks the copy over the build tree's RUNPATH).
#   bench/filter_cache_ab.sh OLD_DIR NEW_DIR CHECKPOINT LATENT CACHE_DIR fp32|bf16 [ROUNDS]
set -euo pipefail
OLD=$1 NEW=$2 CKPT=$3 LATENT=$4 CACHE=$5 P=$6 ROUNDS=${7:-3}
run() {  # build-dir cache-folder label
  LD_LIBRARY_PATH=$1 MESHNN_FILTER_CACHE=$2 OMP_NUM_THREADS=2 "$1/meshnn-bench" first-call \
    --model ltx23 --checkpoint "$CKPT" --latent "$LATENT" --calls 4 --precision "$P" 2>&1 |
    grep -E "^load|^call 1|first / steady" | tr '\n' ' '
  echo " [$3 $P, load average $(cut -d' ' -f1 /proc/loadavg)]"
}
echo "cpu: $(LD_LIBRARY_PATH=$NEW "$NEW/meshnn" info | sed -n 2p)"
rm -rf "$CACHE/old" "$CACHE/new"
run "$OLD" "$CACHE/old" "old cold"
run "$NEW" "$CACHE/new" "new cold"
for _ in $(seq "$ROUNDS"); do
  run "$OLD" "$CACHE/old" "old warm"
  run "$NEW" "$CACHE/new" "new warm"
done
