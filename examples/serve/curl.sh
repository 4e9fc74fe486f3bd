#!/bin/bash
# `meshnn serve` from the shell (docs/serve.md). Usage: ./curl.sh MODEL INPUT.npy OUT.wav [URL]
# with MESHNN_API_KEY set when the server asks for a key.
set -euo pipefail
model=$1 input=$2 out=$3 url=${4:-http://127.0.0.1:8080}
auth=()
[ -n "${MESHNN_API_KEY:-}" ] && auth=(-H "Authorization: Bearer $MESHNN_API_KEY")

curl -fsS "$url/healthz"; echo
curl -fsS "${auth[@]}" "$url/v1/models"; echo
# One-shot decode: .npy in, WAV out (-f: fail on an error status; the JSON error is printed).
curl -sS "${auth[@]}" --fail-with-body -H 'Content-Type: application/x-npy' \
  --data-binary "@$input" -o "$out" -w 'HTTP %{http_code}, %{size_download} bytes in %{time_total} s\n' \
  "$url/v1/models/$model/decode"
# The same as raw 16-bit big-endian PCM (audio/L16) or float32 .npy: set Accept.
curl -sS "${auth[@]}" --fail-with-body -H 'Content-Type: application/x-npy' -H 'Accept: audio/L16' \
  --data-binary "@$input" -o "${out%.wav}.l16" "$url/v1/models/$model/decode"
curl -sS "${auth[@]}" "$url/metrics" | grep -E '^meshnn_(requests_total|audio_seconds_total)' || true
