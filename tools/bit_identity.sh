#!/bin/bash
# Are two builds' outputs the same bits? Runs each user-facing command at default settings with
# OLD and NEW `meshnn` binaries on the same seeded inputs and compares the outputs byte for byte
# (`cmp`); where they differ it prints the largest absolute difference, and fails when that is
# above 1e-6 (or the shapes differ). Released-size random checkpoints (tools/make_checkpoint.py).
#
#   tools/bit_identity.sh OLD_MESHNN NEW_MESHNN [WORK_DIR]
#
# Runs: the demo's WAV; a 4 s LTX-2.3 audio-decode; a 4 s BigVGAN v2 24 kHz vocode; a MiniMax-H3
# 4 s stereo decode and encode (mode and log std); a GR00T N1.6 policy call (the small-dims test
# fixture and its inputs, fixed noise). Inputs are kept in WORK_DIR between runs.
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=${3:-$(mktemp -d /tmp/bitid.XXXXXX)}
mkdir -p "$work"
py=/usr/bin/python3
gr00t=$here/../tests/fixtures/gr00t_head_n1_6.safetensors
cd "$work"
echo "bit identity: old $old, new $new, work $work, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$new" info | sed -n 2p

[ -f ltx23.safetensors ] || $py "$here/make_checkpoint.py" ltx23 ltx23.safetensors --seed 1 --no-check
[ -d bigvgan ] || $py "$here/make_checkpoint.py" bigvgan bigvgan \
  --config bigvgan_v2_24khz_100band_256x --seed 1 --no-check
[ -d h3 ] || $py "$here/make_checkpoint.py" h3 h3 --seed 1 --no-check
$py "$here/bit_identity_inputs.py" "$gr00t"

run() {  # old|new name args...: runs that build's meshnn, outputs under old/ or new/
  local which=$1 name=$2
  shift 2
  local bin=$old
  [ "$which" = new ] && bin=$new
  mkdir -p "$which"
  local t0
  t0=$(date +%s.%N)
  "$bin" "$@" > "$which/$name.log" 2>&1 || {
    echo "FAIL: $which $name"
    cat "$which/$name.log"
    exit 1
  }
  printf '  %-4s %-13s %6.2f s\n' "$which" "$name" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
emb=$(cat embodiment)
for which in old new; do
  run $which demo demo --out $which/demo.wav --quiet
  run $which ltx-decode audio-decode --checkpoint ltx23.safetensors --latent ltx_latent.npy \
    --out $which/ltx.wav
  run $which vocode vocode --checkpoint bigvgan --mel mel.npy --out $which/vocode.wav --quiet
  run $which h3-decode audio-decode --checkpoint h3 --latent h3_latent.npy --out $which/h3.wav
  run $which h3-encode audio-encode --checkpoint h3 --wav stereo.wav --out $which/h3_z.npy \
    --log-std $which/h3_logstd.npy --quiet
  run $which gr00t-policy gr00t-policy --checkpoint "$gr00t" --version n1.6 \
    --features features.npy --token-types token_types.npy --state state.npy \
    --embodiment "$emb" --noise noise.npy --out $which/actions.npy
done

status=0
for f in demo.wav ltx.wav vocode.wav h3.wav h3_z.npy h3_logstd.npy actions.npy; do
  if cmp -s old/$f new/$f; then
    echo "  identical  $f"
  elif $py "$here/bit_identity_inputs.py" --diff old/$f new/$f; then
    echo "  within 1e-6  $f"
  else
    echo "  DIFFERENT  $f"
    status=1
  fi
done
exit $status
