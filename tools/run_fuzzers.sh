#!/bin/bash
# Runs every libFuzzer target in BUILD_DIR for SECONDS each, seeded from fuzz/corpus/<target>/
# (copied into fuzz/corpus-work/<target>/ so that the committed seeds stay small).
# Prints the executions per target and exits non-zero if any target crashed, leaked or timed out.
#   tools/run_fuzzers.sh BUILD_DIR SECONDS
# With FUZZ_RUNS=N in the environment each target runs N executions instead (no time limit), e.g.
#   FUZZ_RUNS=1000000 nice -n 19 tools/run_fuzzers.sh build-fuzz 0
# FUZZ_TARGETS="a_fuzz b_fuzz" restricts the run to those targets; FUZZ_TIMEOUT=S changes the
# per-input time limit (default 10 s; raise it for niced runs on a loaded machine); FUZZ_MAX_LEN=N
# the input size limit (default 65536).
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/fuzz/corpus-work
artifacts=$work/artifacts
mkdir -p "$artifacts"

targets=()
for src in "$root"/fuzz/*_fuzz.cc; do
  targets+=("$(basename "$src" .cc)")
done
if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
fi
limit=(-max_total_time="$seconds")
what="${seconds}s"
if [ -n "${FUZZ_RUNS:-}" ]; then
  limit=(-runs="$FUZZ_RUNS")
  what="$FUZZ_RUNS runs"
fi
if [ ${#targets[@]} -eq 0 ]; then
  echo "run_fuzzers: no fuzz/*_fuzz.cc targets" >&2
  exit 2
fi

status=0
summary=()
for t in "${targets[@]}"; do
  bin=$build/$t
  if [ ! -x "$bin" ]; then
    echo "run_fuzzers: $bin not built (configure with -DMESHNN_FUZZ=ON and clang)" >&2
    status=1
    summary+=("$t: NOT BUILT")
    continue
  fi
  corpus=$work/$t
  mkdir -p "$corpus"
  [ -d "$root/fuzz/corpus/$t" ] && cp -n "$root/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null
  log=$work/$t.log
  echo "run_fuzzers: $t for $what (log: $log)"
  # -rss_limit_mb: a parser must not balloon memory on a tiny input; -timeout: nor hang.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" "$corpus" "${limit[@]}" -print_final_stats=1 -timeout="${FUZZ_TIMEOUT:-10}" \
      -rss_limit_mb=2048 -max_len="${FUZZ_MAX_LEN:-65536}" -artifact_prefix="$artifacts/$t-" >"$log" 2>&1
  rc=$?
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  if [ $rc -ne 0 ]; then
    status=1
    summary+=("$t: FAILED (exit $rc) after ${execs:-?} executions; see $log and $artifacts/")
    grep -m5 -E 'ERROR: |SUMMARY: |Test unit written' "$log" | sed 's/^/    /'
  else
    secs=$(grep -m1 'stat::' "$log" >/dev/null && grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$log" | awk '{print $5}')
    summary+=("$t: ${execs:-?} executions (${secs:-$seconds} s), no crashes")
  fi
done

echo "run_fuzzers: summary"
for line in "${summary[@]}"; do echo "  $line"; done
exit $status
