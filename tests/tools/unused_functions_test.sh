#!/usr/bin/env bash
# Dead code stays gone: `cppcheck --enable=unusedFunction` over the product (src/, python/src/)
# with the programs that also call into it (bench/, examples/, fuzz/) must report no function
# outside unused_functions_allow.txt (at most 10 entries) and unused_functions_pending.txt.
#
#   allow:   functions kept on purpose although nothing calls them by name — ISA kernels reached
#            through a dispatch table, callbacks a library calls (nlohmann's SAX interface).
#   pending: dead functions another step of issue 33 deletes; the list may only shrink: an entry
#            that cppcheck no longer reports fails the test until its line is removed.
# An entry is `path:function` or `path:*` (every function cppcheck reports in that file).
# cppcheck matches by name only, so a function that shares its name with a used one is not
# reported (a miss, never a false failure). Takes ~25 s on 2 cores. Exit 77 (CTest: skipped)
# when cppcheck is not installed.
#
# usage: unused_functions_test.sh [source dir]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
if ! command -v cppcheck >/dev/null 2>&1; then
  echo "SKIPPED: cppcheck is not installed (apt-get install cppcheck, or make deps)"
  exit 77
fi
allow=tests/tools/unused_functions_allow.txt
pending=tests/tools/unused_functions_pending.txt
entries() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$1" | sort -u; }

n_allow=$(entries "$allow" | wc -l)
if ((n_allow > 10)); then
  echo "FAIL: $allow has $n_allow entries; at most 10 (issue 33's definition of done)"
  exit 1
fi

# One `path:function` per report.
found=$(cppcheck --enable=unusedFunction --quiet --std=c++20 --language=c++ -Iinclude -Isrc \
          --template='{id}|{file}|{message}' src python/src bench examples fuzz 2>&1 >/dev/null |
        sed -n "s/^unusedFunction|\([^|]*\)|The function '\([^']*\)' is never used.*/\1:\2/p" |
        sort -u)

listed() {  # entry file, finding → 0 when the finding is listed (exactly or as path:*)
  grep -qxF -e "$2" -e "${2%%:*}:*" <(entries "$1")
}
status=0
unlisted=()
while IFS= read -r f; do
  [[ -z "$f" ]] && continue
  listed "$allow" "$f" || listed "$pending" "$f" || unlisted+=("$f")
done <<<"$found"
if ((${#unlisted[@]})); then
  echo "FAIL: ${#unlisted[@]} function(s) that no product path, CLI, serve, bench or Python calls."
  echo "Delete them (or move a test's reference under tests/support/):"
  printf '  %s\n' "${unlisted[@]}"
  status=1
fi
stale=()
for list in "$allow" "$pending"; do
  while IFS= read -r e; do
    if [[ "$e" == *':*' ]]; then
      grep -q "^${e%%:*}:" <<<"$found" || stale+=("$list: $e")
    else
      grep -qxF "$e" <<<"$found" || stale+=("$list: $e")
    fi
  done < <(entries "$list")
done
if ((${#stale[@]})); then
  echo "FAIL: listed but no longer reported (deleted, renamed or now called): remove these lines:"
  printf '  %s\n' "${stale[@]}"
  status=1
fi
((status == 0)) && echo "OK: $(grep -c . <<<"$found" || true) report(s), all in the allow-list ($n_allow entries) or the pending list ($(entries "$pending" | wc -l) entries)"
exit $status
