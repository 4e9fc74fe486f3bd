#!/bin/bash
# MiniMax-H3 audio VAE: meshnn against the tools/ PyTorch reference, both directions, in one
# invocation (rounds alternate the two so load drift hits both). Prints per run: wall seconds of
# the whole process (load included), process CPU seconds, peak RSS, and the call alone (meshnn's
# summary line, the PyTorch script's JSON); then the accuracy of meshnn's last outputs against
# PyTorch's.
#
#   bench/torch/h3_vs_torch.sh FOLDER LATENT.npy WAVE.npy WAVE.wav [ROUNDS] [THREADS]
# WAVE.npy (B, 1, L) and WAVE.wav (one channel per item) must hold the same 16-bit values.
# PyTorch runs in its best set-up (docs/benchmarks.md): OpenBLAS (libopenblas0-pthread) with its own
# CPU detection, glibc malloc keeping freed memory.
set -euo pipefail
folder=$1 latent=$2 wave_npy=$3 wave_wav=$4 rounds=${5:-2} threads=${6:-2}
here=$(cd "$(dirname "$0")" && pwd)
meshnn=${MESHNN:-$here/../../build/meshnn}
torch_py=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE MALLOC_MMAP_MAX_=0
  MALLOC_TRIM_THRESHOLD_=68719476736 /usr/bin/python3)
out=$(mktemp -d /tmp/h3bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
timed() {  # label, command... → "label wall_s cpu_s peak_mb"
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$out/t" "$@" > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
  read -r wall user sys rss < "$out/t"
  printf '%-34s wall %7.2f s  cpu %7.2f s  peak %6d MB\n' "$label" "$wall" \
    "$(echo "$user + $sys" | bc)" $((rss / 1024))
}
call() {  # meshnn's own timing of the call, from its summary line
  printf '  meshnn call: %s\n' "$(grep -oE '(load|decode|encode) [0-9.]+ s' "$out/log" | tr '\n' ' ')"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 | grep -q openblas ||
  echo "warning: the system BLAS is not OpenBLAS (apt-get install libopenblas0-pthread): PyTorch is not in its best set-up"
for r in $(seq "$rounds"); do
  timed "meshnn decode (process)" "$meshnn" audio-decode --checkpoint "$folder" \
    --latent "$latent" --out "$out/y.wav" --threads "$threads"
  call
  timed "meshnn decode (process, 1x2)" "$meshnn" audio-decode --checkpoint "$folder" \
    --latent "$latent" --out "$out/y12.wav" --threads 1 --mesh 1x2
  call
  timed "torch decode (process)" "${torch_py[@]}" "$here/torch_minimax_h3_bench.py" decode \
    "$folder" "$latent" --threads "$threads" --out "$out/y_ref.npy"
  grep '^{' "$out/log"
  timed "meshnn encode (process)" "$meshnn" audio-encode --checkpoint "$folder" \
    --wav "$wave_wav" --out "$out/z.npy" --threads "$threads"
  call
  timed "torch encode (process)" "${torch_py[@]}" "$here/torch_minimax_h3_bench.py" encode \
    "$folder" "$wave_npy" --threads "$threads" --out "$out/z_ref.npy"
  grep '^{' "$out/log"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# The reference's (B, 1, L) as `meshnn verify` reads arrays, channel-first (B, L): one channel per
# item, as in the WAV.
/usr/bin/python3 -c "import numpy as np; np.save('$out/y_ref.npy', np.load('$out/y_ref.npy')[:, 0, :].copy())"
"$meshnn" verify "$out/y_ref.npy" "$out/y.wav" 2>&1 | grep -E "PSNR|result|error" || true
"$meshnn" verify "$out/y.wav" "$out/y12.wav" 2>&1 | grep -E "PSNR|result|error" || true
/usr/bin/python3 -c "
import numpy as np, sys
z, r = np.load('$out/z.npy'), np.load('$out/z_ref.npy')
print('encode rel L2 vs torch: %.2e' % (np.linalg.norm(z - r) / np.linalg.norm(r)))"
