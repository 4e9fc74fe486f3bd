#!/bin/bash
# Regenerates every golden fixture: runs each tools/goldens/gen_*.py with an output folder.
#   make_all.sh           writes into tests/fixtures/
#   make_all.sh --check   writes into a scratch folder and fails if any file differs from the
#                         committed one (regeneration must reproduce the fixtures exactly).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=tests/fixtures
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
export OMP_NUM_THREADS=1   # deterministic reductions in torch
for g in tools/goldens/gen_*.py; do
  echo "goldens: $g"
  /usr/bin/python3 "$g" "$out"
done
if [ $check = 1 ]; then
  status=0
  for f in "$out"/*.safetensors "$out"/*.npy "$out"/*/*; do
    name=${f#"$out"/}
    if ! cmp -s "$f" "tests/fixtures/$name"; then
      echo "goldens-check: $name differs from the committed fixture"; status=1
    fi
  done
  [ $status = 0 ] && echo "goldens-check: all fixtures reproduce exactly"
  exit $status
fi
