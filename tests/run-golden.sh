#!/bin/sh
# Golden tests through the CLI: one directory per case under tests/golden/,
#   cmd     the arguments to leaksnap (one line, shell words; fx/ is the
#           generated binary fixtures, data/ is testdata/, out/ a scratch dir)
#   out     expected stdout (absent: must be empty)
#   err     expected stderr (absent: must be empty)
#   status  expected exit status (absent: 0)
# Usage: run-golden.sh BUILD_DIR [CASE...]   UPDATE=1 rewrites expectations.
# Prints one line per failure and "golden: N passed, N failed" at the end.
set -u
# Names are shortened with the character U+2026 in a UTF-8 locale, "..."
# otherwise: the expectations are a UTF-8 locale's.
LC_ALL=C.UTF-8
export LC_ALL
B=${1:?build dir}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$B/bin" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-golden.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
"$B/tests/mkfixture" "$work/fx" || { echo "golden: cannot make fixtures"; exit 1; }
ln -s "$top/testdata" "$work/data"

if [ $# -gt 0 ]; then cases="$*"; else cases=$(ls "$top/tests/golden"); fi
pass=0 fail=0
for c in $cases; do
	d="$top/tests/golden/$c"
	[ -f "$d/cmd" ] || continue
	rm -rf "$work/out" && mkdir "$work/out"
	args=$(cat "$d/cmd")
	(cd "$work" && eval "set -- $args" && "$bin/leaksnap" "$@" >"$work/stdout" 2>"$work/stderr")
	st=$?
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$work/stdout" "$d/out"; [ -s "$d/out" ] || rm -f "$d/out"
		cp "$work/stderr" "$d/err"; [ -s "$d/err" ] || rm -f "$d/err"
		if [ $st -ne 0 ]; then echo $st > "$d/status"; else rm -f "$d/status"; fi
	fi
	want_st=0
	[ -f "$d/status" ] && want_st=$(cat "$d/status")
	ok=1
	[ -f "$d/out" ] && exp_out="$d/out" || exp_out=/dev/null
	[ -f "$d/err" ] && exp_err="$d/err" || exp_err=/dev/null
	if ! cmp -s "$exp_out" "$work/stdout"; then
		ok=0; echo "FAIL $c: stdout differs"; diff -u "$exp_out" "$work/stdout" | head -20
	fi
	if ! cmp -s "$exp_err" "$work/stderr"; then
		ok=0; echo "FAIL $c: stderr differs"; diff -u "$exp_err" "$work/stderr" | head -10
	fi
	if [ "$st" != "$want_st" ]; then
		ok=0; echo "FAIL $c: exit status $st, expected $want_st"
	fi
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "golden: $pass passed, $fail failed"
[ $fail = 0 ]
