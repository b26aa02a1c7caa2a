#!/bin/sh
# Run every test of the project: unit tests (cmocka), golden CLI tests and
# script tests.  Ends with "N passed, N failed"; exits non-zero on failure.
set -u
B=${1:-build}
# A developer's own symbol servers must not change what the tests see, nor
# the files their debuginfod client cached (the symbolizer looks there even
# with no server): a cache that is never made.
unset DEBUGINFOD_URLS XDG_CACHE_HOME
DEBUGINFOD_CACHE_PATH=${TMPDIR:-/tmp}/leaksnap-check-no-cache.$$
export DEBUGINFOD_CACHE_PATH
top=$(cd "$(dirname "$0")/.." && pwd)
total_pass=0 total_fail=0
log=$(mktemp "${TMPDIR:-/tmp}/leaksnap-check.XXXXXX")
trap 'rm -f "$log"' EXIT INT TERM

count() { # $1 = passed, $2 = failed
	total_pass=$((total_pass + $1)); total_fail=$((total_fail + $2))
}

# Unit tests: cmocka prints "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)".
for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	( cd "$top" && "$t" ) >"$log" 2>&1
	st=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	p=${p:-0} f=${f:-0}
	if [ $st -ne 0 ] && [ "$f" = 0 ]; then f=1; fi # crashed or aborted
	echo "$name: $p passed, $f failed"
	[ "$f" != 0 ] && grep -E '^\[  (FAILED|ERROR) |FAIL|error|ERROR' "$log" | head -20
	count "$p" "$f"
done

# Golden CLI tests.
sh "$top/tests/run-golden.sh" "$B" >"$log" 2>&1
grep -v '^golden: ' "$log"
line=$(grep '^golden: ' "$log" | tail -1)
echo "$line"
p=$(echo "$line" | sed -n 's/^golden: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
f=$(echo "$line" | sed -n 's/^golden: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
[ -n "$p" ] || { p=0; f=1; echo "golden: driver failed"; }
count "$p" "$f"

# Script tests: each tests/t-*.sh exits 0 (pass), 77 (skip) or other (fail).
for s in "$top"/tests/t-*.sh; do
	[ -f "$s" ] || continue
	name=$(basename "$s" .sh)
	sh "$s" "$B" >"$log" 2>&1
	st=$?
	case $st in
	0) echo "$name: passed"; count 1 0 ;;
	77) echo "$name: skipped ($(tail -1 "$log"))" ;;
	*) echo "$name: FAILED"; tail -20 "$log"; count 0 1 ;;
	esac
done

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
