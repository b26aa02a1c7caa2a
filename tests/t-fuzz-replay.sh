#!/bin/sh
# Replay every committed fuzz corpus (tests/fuzz/corpus/<harness>/: seeds,
# what fuzzing kept, and the inputs of every finding fixed) through its
# harness built as a plain program: no crash, no sanitizer report (in the
# SANITIZE=1 build), no broken invariant, and every input run.
set -u
B=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
fail=0 total=0
for dir in "$top"/tests/fuzz/corpus/*/; do
	h=$(basename "$dir")
	bin="$B/tests/fuzz/replay_$h"
	if [ ! -x "$bin" ]; then
		echo "t-fuzz-replay: $h: no harness $bin"
		fail=1
		continue
	fi
	want=$(find "$dir" -type f | wc -l)
	out=$("$bin" "$dir" 2>&1)
	st=$?
	if [ $st -ne 0 ] || [ "$out" != "$want inputs" ]; then
		echo "t-fuzz-replay: $h: exit $st, expected '$want inputs'"
		echo "$out" | tail -20
		echo "(REPLAY_VERBOSE=1 $bin $dir names each input)"
		fail=1
		continue
	fi
	echo "t-fuzz-replay: $h: $want inputs"
	total=$((total + want))
done
[ $total -gt 0 ] || { echo "t-fuzz-replay: no corpus"; exit 1; }
exit $fail
