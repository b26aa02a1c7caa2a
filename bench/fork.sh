#!/bin/sh
# bench/fork.sh [BUILD_DIR]: the fork-per-request benchmark.  A server
# that forks a child per request (bench/forkbench.c: BENCH_REQUESTS (400)
# requests, each child allocating 200 blocks and computing BENCH_STEPS
# (2000) thousand steps, about 1.6 ms, the parent holding 20000 blocks) runs
# bare and under the hook
# with the defaults, with LEAKSNAP_REACHABILITY=1, and with
# LEAKSNAP_DUMP_ON_EXIT=all (every child's exit dump, as before issue 32).
# BENCH_RUNS (5) runs of each, taken in turn; reports the median requests
# a second of each, by the wall clock and by CPU time (the parent's and the
# children's: what other load on a shared machine changes least), and
# their ratios to bare.  Goal: >= 0.9x bare with the defaults,
# reachability included.
set -eu

B=${1:-build}
BENCH=$B/bench/forkbench
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
REQUESTS=${BENCH_REQUESTS:-400}
STEPS=${BENCH_STEPS:-2000}
RUNS=${BENCH_RUNS:-5}
RESULTS=$B/bench/results-fork.txt
. "$(dirname "$0")/lib.sh"

die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$BENCH" ] || die "$BENCH is missing: run 'make bench'"
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-forkbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

echo "bench: fork per request, $REQUESTS requests of $STEPS thousand steps, $RUNS runs each" >&2
# one ROW: a run of the server as ROW says, its requests a second
run_row() {
	rm -f "$WORK"/d.*
	case $1 in
	bare) out=$("$BENCH" "$REQUESTS" "$STEPS") ;;
	default) out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/d" "$BENCH" "$REQUESTS" "$STEPS") ;;
	reach) out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/d" LEAKSNAP_REACHABILITY=1 \
		"$BENCH" "$REQUESTS" "$STEPS") ;;
	all) out=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/d" LEAKSNAP_DUMP_ON_EXIT=all \
		"$BENCH" "$REQUESTS" "$STEPS") ;;
	esac || die "forkbench ($1) failed"
	n=$(ls "$WORK" | grep -c '\.dump$' || true)
	echo "$1 $n" >>"$WORK/dumps"
	echo "$out" | sed -n 's/.* per_second \([0-9.]*\) .* per_cpu_second \([0-9.]*\)$/\1 \2/p'
}
ROWS="bare default reach all"
for i in $(seq 1 "$RUNS"); do
	for r in $ROWS; do
		run_row "$r" >>"$WORK/$r"
	done
done
col() { # FILE N: column N of FILE
	awk -v n="$2" '{ print $n }' "$1"
}
bare=$(col "$WORK/bare" 1 | median)
bare_cpu=$(col "$WORK/bare" 2 | median)
{
	echo "fork per request: $REQUESTS requests, $STEPS thousand steps of work each, median of $RUNS runs"
	printf '%-8s %12s %8s %14s %8s %8s\n' row "requests/s" ratio "requests/cpu-s" ratio dumps
	for r in $ROWS; do
		m=$(col "$WORK/$r" 1 | median)
		c=$(col "$WORK/$r" 2 | median)
		d=$(awk -v r="$r" '$1 == r { print $2; exit }' "$WORK/dumps")
		printf '%-8s %12.1f %7.2fx %14.1f %7.2fx %8s\n' "$r" "$m" \
			"$(echo "$m $bare" | awk '{ print $1 / $2 }')" "$c" \
			"$(echo "$c $bare_cpu" | awk '{ print $1 / $2 }')" "$d"
	done
	echo "goal: default and reach >= 0.90x bare"
} | tee "$RESULTS"
