#!/bin/sh
# bench/reach.sh [BUILD_DIR]: the reachability benchmark.  One process with
# BENCH_BLOCKS (1M) live blocks of 24..183 bytes (about 100 MB of heap,
# ~10% unreachable; bench/reachbench.c) dumps BENCH_DUMPS (5) times through
# leaksnap_dump(), once with LEAKSNAP_REACHABILITY=1 and once without (the
# plain dump of the same process), and forks itself bare as often (fork's
# own time).  Reports medians: the dump's wall time both ways and their
# ratio; the pause (threads stopped: signals, answers, clone) against the
# goal of 5 ms plus fork's own time; the scan (in the child) and its speed
# in bytes scanned (roots + marked blocks) per second against 1 GB/s.
# Timings on a shared machine are noisy: the spread is printed too.
set -eu

B=${1:-build}
BENCH=$B/bench/reachbench
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
BLOCKS=${BENCH_BLOCKS:-1000000}
DUMPS=${BENCH_DUMPS:-5}
RESULTS=$B/bench/results-reach.txt
. "$(dirname "$0")/lib.sh"

die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$BENCH" ] || die "$BENCH is missing: run 'make bench'"
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-reachbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

echo "bench: reachability, $BLOCKS blocks, $DUMPS dumps each way" >&2
env LD_PRELOAD="$HOOK" LEAKSNAP_DUMP_ON_EXIT=0 "$BENCH" "$BLOCKS" "$DUMPS" "$WORK/plain" \
	>"$WORK/plain.out" || die "reachbench (plain) failed"
env LD_PRELOAD="$HOOK" LEAKSNAP_DUMP_ON_EXIT=0 LEAKSNAP_REACHABILITY=1 "$BENCH" "$BLOCKS" "$DUMPS" \
	"$WORK/reach" >"$WORK/reach.out" || die "reachbench (reachability) failed"
for i in $(seq 1 "$DUMPS"); do
	grep -a -q '^reachability_scan_us=' "$WORK/reach.$i.dump" ||
		die "dump $i: no reachability ($(grep -a '^reachability=' "$WORK/reach.$i.dump"))"
done

# meta KEY: the value of KEY in every reachability dump, one per line
meta() {
	for i in $(seq 1 "$DUMPS"); do
		grep -a "^$1=" "$WORK/reach.$i.dump" | sed 's/^[^=]*=//'
	done
}
# spread: "min..max" of the numbers on standard input
spread() {
	sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f..%.0f", lo, hi }'
}
col() {
	awk -v k="$1" '$1 == k { print $2 }' "$2"
}

# median, rounded to an integer
med() {
	median | awk '{ printf "%.0f\n", $1 }'
}
plain=$(col dump_us "$WORK/plain.out" | med)
reach=$(col dump_us "$WORK/reach.out" | med)
fork=$(cat "$WORK/plain.out" "$WORK/reach.out" | col fork_us /dev/stdin | med)
pause=$(meta reachability_pause_us | med)
inner=$(meta reachability_fork_us | med)
scan=$(meta reachability_scan_us | med)
cpu_scan=$(meta reachability_scan_cpu_us | med)
meta reachability_scanned | awk '{ print $1 + $4 }' >"$WORK/scanned"
bytes=$(med <"$WORK/scanned")
heap=$(awk '$1 == "heap" { print $2, $3 }' "$WORK/reach.out")
unr=$(meta reachability_unreachable | head -n 1)
want=$(awk '$1 == "expect-unreachable" { print $2 " bytes in " $3 " of" }' "$WORK/reach.out")
case $unr in
"$want "*) exact="exactly the dropped trees" ;;
*) exact="the dropped trees are $want" ;;
esac

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
{
	echo "leaksnap benchmark: reachability ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); leaksnap $rev"
	echo "workload: reachbench, heap ${heap% *} bytes in ${heap#* } blocks"
	echo "          unreachable: $unr ($exact)"
	echo "          medians of $DUMPS dumps (min..max in brackets); one process each way"
	echo ""
	printf '%-34s %12s %s\n' "what" "median" "goal"
	printf '%-34s %10s us [%s]\n' "plain dump (leaksnap_dump)" "$plain" \
		"$(col dump_us "$WORK/plain.out" | spread)"
	printf '%-34s %10s us [%s]  %.2fx plain\n' "dump with reachability" "$reach" \
		"$(col dump_us "$WORK/reach.out" | spread)" "$(echo "$reach $plain" | awk '{ print $1 / $2 }')"
	printf '%-34s %10s us [%s]\n' "bare fork of the process" "$fork" \
		"$(cat "$WORK/plain.out" "$WORK/reach.out" | col fork_us /dev/stdin | spread)"
	printf '%-34s %10s us [%s]\n' "pause (threads stopped)" "$pause" \
		"$(meta reachability_pause_us | spread)"
	printf '%-34s %10s us [%s]\n' "  of which the clone (fork)" "$inner" "$(meta reachability_fork_us | spread)"
	# the goal: at most 5 ms more than the fork it contains
	extra=$(for i in $(seq 1 "$DUMPS"); do
		p=$(grep -a '^reachability_pause_us=' "$WORK/reach.$i.dump" | sed 's/.*=//')
		f=$(grep -a '^reachability_fork_us=' "$WORK/reach.$i.dump" | sed 's/.*=//')
		echo $((p - f))
	done)
	printf '%-34s %10s us [%s]  <= 5000 us: %s\n' "  pause less its fork" \
		"$(echo "$extra" | med)" "$(echo "$extra" | spread)" \
		"$(echo "$extra" | med | awk '{ print ($1 <= 5000) ? "met" : "missed" }')"
	printf '%-34s %10s us [%s]\n' "scan (in the child), wall" "$scan" "$(meta reachability_scan_us | spread)"
	printf '%-34s %10s us [%s]  (CPU time: less of the load)\n' "scan (in the child), CPU" "$cpu_scan" \
		"$(meta reachability_scan_cpu_us | spread)"
	printf '%-34s %10s us [%s]\n' "  of which sorting and indexing" "$(meta reachability_index_us | med)" \
		"$(meta reachability_index_us | spread)"
	printf '%-34s %10.2f GB/s (%s bytes)  >= 1 GB/s: %s\n' "scan speed" \
		"$(echo "$bytes $scan" | awk '{ print $1 / $2 / 1000 }')" "$bytes" \
		"$(echo "$bytes $scan" | awk '{ print ($1 / $2 / 1000 >= 1) ? "met" : "missed" }')"
	printf '%-34s %10.2f GB/s of CPU time\n' "scan speed, CPU" \
		"$(echo "$bytes $cpu_scan" | awk '{ print $1 / $2 / 1000 }')"
} | tee "$RESULTS"
echo "bench: results in $RESULTS" >&2
