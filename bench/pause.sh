#!/bin/sh
# bench/pause.sh [BUILD_DIR]: pauses under load (issue 32).  A server's
# shape, BENCH_THREADS (11) threads allocating and freeing without rest on
# the machine's CPUs (bench/pausebench.c), runs under the hook with
# LEAKSNAP_REACHABILITY=1 for BENCH_SECONDS (20) and asks for BENCH_DUMPS
# (40) dumps by signal, BENCH_RUNS (3) times.  From every dump's metadata:
# the pause (first stop signal to release), its parts (the threads'
# stopping, the clone of the image) and how long the table locks were held
# (allocating threads wait for them: the table walk, then the pause);
# median, 95th percentile and max of each.  Goal: pause p95 < 5 ms.
# Then how long a process of one thread stands still for a dump (below).
set -eu

B=${1:-build}
BENCH=$B/bench/pausebench
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
THREADS=${BENCH_THREADS:-11}
SECONDS_=${BENCH_SECONDS:-20}
DUMPS=${BENCH_DUMPS:-40}
RUNS=${BENCH_RUNS:-3}
RESULTS=$B/bench/results-pause.txt

die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$BENCH" ] || die "$BENCH is missing: run 'make bench'"
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-pausebench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

echo "bench: pauses, $THREADS busy threads, $DUMPS dumps in $SECONDS_ s, $RUNS runs" >&2
for r in $(seq 1 "$RUNS"); do
	env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/r$r" LEAKSNAP_REACHABILITY=1 \
		LEAKSNAP_DUMP_ON_EXIT=0 "$BENCH" "$THREADS" "$SECONDS_" "$DUMPS" >"$WORK/r$r.out" ||
		die "pausebench failed"
done
n=0
for d in "$WORK"/r*.dump; do
	[ -f "$d" ] || continue
	grep -a -q '^reachability_pause_us=' "$d" || continue
	n=$((n + 1))
	for k in pause stop fork locked walk; do
		grep -a "^reachability_${k}_us=" "$d" | sed 's/^[^=]*=//' >>"$WORK/$k"
	done
	p=$(grep -a '^reachability_pause_us=' "$d" | sed 's/^[^=]*=//')
	f=$(grep -a '^reachability_fork_us=' "$d" | sed 's/^[^=]*=//')
	echo $((p - f)) >>"$WORK/pause_less_fork"
done
[ "$n" -gt 0 ] || die "no dump with reachability"
# the workers' free + malloc pairs that took 1 ms or more
cat "$WORK"/r*.out | sed -n 's/^stall //p' >"$WORK/stall"
# stats FILE: median, p95, max (ms) of the µs values in FILE
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "-"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			i = int(NR * 0.95 + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR
			printf "%8.2f %8.2f %8.2f\n", m / 1000, v[i] / 1000, v[NR] / 1000
		}'
}
{
	echo "pauses under load: $THREADS busy threads on $(nproc) CPUs, $n dumps with reachability"
	printf '%-34s %8s %8s %8s\n' "(ms)" median p95 max
	printf '%-34s %s\n' "pause (threads stopped)" "$(stats "$WORK/pause")"
	printf '%-34s %s\n' "  stopping the threads" "$(stats "$WORK/stop")"
	printf '%-34s %s\n' "  the clone of the image" "$(stats "$WORK/fork")"
	printf '%-34s %s\n' "pause less its clone" "$(stats "$WORK/pause_less_fork")"
	printf '%-34s %s\n' "table locks held" "$(stats "$WORK/locked")"
	printf '%-34s %s\n' "  the table walk" "$(stats "$WORK/walk")"
	printf '%-34s %s\n' "free+malloc >= 1 ms ($(wc -l <"$WORK/stall"))" "$(stats "$WORK/stall")"
	printf '%-34s %s\n' "  of which >= 5 ms" "$(awk '$1 >= 5000' "$WORK/stall" | wc -l)"
	echo "goal: pause p95 < 5 ms (docs/reachability.md: 5 ms beyond the clone)"
} | tee "$RESULTS"

# A process of one thread (bench/onepause): ONE_MIB MiB of live blocks (a
# million at 64), ONE_DUMPS dump signals 0.1 s apart, no reachability; from
# 64 call paths (about 6,000 records), then from 4,096 (about 400,000: the
# dump file is larger, and its writing longer). By default the program's own
# thread writes each dump (in the handler: docs/hook.md, "The hook's
# thread"); with a thread of the program's that waits, the hook's dump
# thread writes it and the program waits only for the snapshot. The stalls
# are the free+malloc pairs that took 1 ms or more: about one a dump.
ONE_MIB=${BENCH_ONE_MIB:-64}
ONE_DUMPS=${BENCH_ONE_DUMPS:-20}
ONE=$B/bench/onepause
[ -x "$ONE" ] || die "$ONE is missing: run 'make bench'"
for bits in 6 12; do
	for how in here thread; do
		arg=
		[ $how = thread ] && arg=thread
		env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/one-$bits-$how" LEAKSNAP_DUMP_ON_EXIT=0 \
			"$ONE" "$ONE_MIB" $bits "$ONE_DUMPS" $arg >"$WORK/one-$bits-$how.out" ||
			die "onepause failed"
		sed -n 's/^stall //p' "$WORK/one-$bits-$how.out" >"$WORK/one-$bits-$how.stall"
		n=$(ls "$WORK"/one-$bits-$how.*.dump 2>/dev/null | wc -l)
		[ "$n" = "$ONE_DUMPS" ] || die "onepause ($bits, $how): $n dumps, expected $ONE_DUMPS"
	done
done
{
	echo
	echo "a process of one thread: $ONE_MIB MiB of live blocks, $ONE_DUMPS dumps, no reachability"
	printf '%-40s %8s %8s %8s %s\n' "(ms, free+malloc >= 1 ms)" median p95 max "  count"
	for bits in 6 12; do
		printf '%-40s %s   %s\n' "$((1 << bits)) paths, dump on the program's thread" \
			"$(stats "$WORK/one-$bits-here.stall")" "$(wc -l <"$WORK/one-$bits-here.stall")"
		printf '%-40s %s   %s\n' "$((1 << bits)) paths, dump thread (one waiting)" \
			"$(stats "$WORK/one-$bits-thread.stall")" "$(wc -l <"$WORK/one-$bits-thread.stall")"
	done
} | tee -a "$RESULTS"
