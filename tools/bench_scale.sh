#!/bin/bash
# The measured table of docs/scale_out.md: wall time and link bytes of the LTX-2.3 2 s time shard
# (1x2), the MiniMax-H3 stereo split (1x2) and the BigVGAN stream pipeline (1x2), on one device,
# on an MPI mesh inside one host (shared memory) and across two network namespaces over TCP for
# each link profile (tools/netns_mesh.sh). Real-size seeded checkpoints (tools/make_checkpoint.py).
#
#   tools/bench_scale.sh [--models DIR] [--build DIR] [--profiles "none 100g 10g 1g"]
#
# Needs root for the namespaces (without it, only the one-host rows). Prints SCALE lines:
#   <where> SCALE <case> threads=<t> ranks=<n> median_ms=… bytes_per_step=… packets_per_step=…
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
MODELS=/tmp/meshnn_scale_models
BUILD="$SRC/build"
PROFILES="none 100g 10g 1g"
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --profiles) PROFILES=$2; shift 2 ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
BIN="$BUILD/meshnn_mpi_tests"
mkdir -p "$MODELS"
mk() { [ -e "$MODELS/$2" ] || /usr/bin/python3 "$SRC/tools/make_checkpoint.py" "$1" "$MODELS/$2" "${@:3}" --no-check; }
mk ltx23 ltx23.safetensors
mk bigvgan bigvgan --config bigvgan_v2_24khz_100band_256x --fold
mk h3 h3 --fold
export MESHNN_SCALE_BENCH_DIR="$MODELS" OMPI_MCA_btl='^ofi,openib' OMPI_MCA_mtl='^ofi,psm'
FILTER=--gtest_filter=MpiScaleBench.Table
"$BIN" "$FILTER" | sed -n 's/^SCALE/one-device SCALE/p'
mpiexec.openmpi --allow-run-as-root --oversubscribe -np 2 "$BIN" "$FILTER" |
  sed -n 's/^SCALE/one-host-shm SCALE/p'
if ! "$SRC/tools/netns_mesh.sh" check >/dev/null; then
  echo "bench_scale: no network namespaces here: $("$SRC/tools/netns_mesh.sh" check)" >&2
  exit 0
fi
ID="bs$$"
trap '"$SRC/tools/netns_mesh.sh" down "$ID"' EXIT
"$SRC/tools/netns_mesh.sh" up "$ID"
for p in $PROFILES; do
  "$SRC/tools/netns_mesh.sh" shape "$ID" "$p" >&2
  MESHNN_SCALE_BENCH_IFACE="${ID}a" "$SRC/tools/netns_mesh.sh" run "$ID" \
    -x MESHNN_SCALE_BENCH_DIR -x MESHNN_SCALE_BENCH_IFACE "$BIN" "$FILTER" |
    sed -n "s/^SCALE/two-hosts-$p SCALE/p"
done
