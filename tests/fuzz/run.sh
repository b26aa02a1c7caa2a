#!/bin/sh
# make fuzz: run each libFuzzer harness for N seconds, one after another.
# Usage: run.sh FUZZ_BUILD_DIR SECONDS NAME...
# Each harness starts from its committed corpus (tests/fuzz/corpus/<name>/,
# read only) and keeps what it finds in FUZZ_BUILD_DIR/corpus/<name>/; a
# crash, leak, timeout or sanitizer report is written to
# FUZZ_BUILD_DIR/artifacts/ and fails the run.  Limits: 10 s per input,
# 2 GB of RSS, no single allocation over 256 MB, inputs up to 64 KiB (a
# larger allocation for such an input is a finding: memory must be
# bounded by the input's size).  FUZZ_ARGS adds libFuzzer options;
# FUZZ_CPU=1 makes SECONDS the harness's CPU time rather than wall time.
set -u
fb=$1 secs=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$fb/artifacts" "$fb/logs"
failed=""
for h in "$@"; do
	mkdir -p "$fb/corpus/$h"
	log="$fb/logs/$h-$(date +%Y%m%d-%H%M%S).log"
	dict=""
	[ -f "$top/tests/fuzz/$h.dict" ] && dict="-dict=$top/tests/fuzz/$h.dict"
	echo "fuzz: $h for $secs s (log: $log)"
	opts="-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -max_len=65536"
	opts="$opts -print_final_stats=1 -artifact_prefix=$fb/artifacts/$h- $dict ${FUZZ_ARGS:-}"
	if [ "${FUZZ_CPU:-0}" = 1 ] && [ -r /proc/self/stat ]; then
		# N CPU seconds, not N seconds of a shared machine's time: the
		# harness's own CPU time is watched and it is interrupted there.
		# shellcheck disable=SC2086
		nice -n 10 "$fb/fuzz_$h" $opts "$fb/corpus/$h" "$top/tests/fuzz/corpus/$h" \
			>"$log" 2>&1 &
		pid=$!
		tck=$(getconf CLK_TCK)
		used=0
		while kill -0 "$pid" 2>/dev/null; do
			t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || break
			[ -n "$t" ] && used=$((t / tck))
			if [ "$used" -ge "$secs" ]; then
				kill -INT "$pid"
				break
			fi
			sleep 2
		done
		wait "$pid"
		st=$?
		[ $st = 72 ] && st=0 # interrupted as asked
		echo "cpu_seconds:$used" >>"$log"
	else
		timer=""
		[ -x /usr/bin/time ] && timer="/usr/bin/time -f cpu_seconds:%U+%S"
		# shellcheck disable=SC2086
		nice -n 10 $timer "$fb/fuzz_$h" -max_total_time="$secs" $opts \
			"$fb/corpus/$h" "$top/tests/fuzz/corpus/$h" >"$log" 2>&1
		st=$?
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	cpu=$(sed -n 's/^cpu_seconds://p' "$log" | tail -1)
	echo "fuzz: $h: exit $st, ${execs:-?} runs, $cov, ${cpu:+CPU $cpu s, }corpus" \
		"$(ls "$fb/corpus/$h" | wc -l) new"
	if [ $st -ne 0 ]; then
		grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: |.*runtime error)' "$log" | head -5
		ls "$fb/artifacts/$h-"* 2>/dev/null
		failed="$failed $h"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: findings in:$failed"
	exit 1
fi
echo "fuzz: no findings"
