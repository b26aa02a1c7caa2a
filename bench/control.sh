#!/bin/sh
# bench/control.sh [BUILD_DIR]: the control socket's benchmark.
#  - One process with BENCH_BLOCKS (1M) live blocks (bench/ctlbench.c, about
#    4,096 records) under libleakhook.so with LEAKSNAP_CONTROL=1 is dumped
#    BENCH_DUMPS (5) times each way, alternately: a file dump
#    (leaksnap_dump() on its main thread) and a socket dump (`dump` over the
#    control socket, read whole by tests/hook/ctlclient).  The program's
#    pause is what a thread of its own that allocates in a tight loop sees
#    as its longest turn during each dump (the snapshot holds the tables);
#    the goal: the same both ways.  Total time: the file dump's call, and
#    the socket dump from the request to its last byte at the client.
#  - The idle control thread's cost: varbench (2 threads) under the hook with
#    LEAKSNAP_CONTROL=1 and without, BENCH_RUNS (5) pairs interleaved, each
#    run's CPU time (user + system); the goal: a ratio within the noise
#    (the spread of the runs without).
# Medians, with min..max in brackets.
set -eu

B=${1:-build}
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
BENCH=$B/bench/ctlbench
CLIENT=$B/tests/hook/ctlclient
VAR=$B/bench/varbench
BLOCKS=${BENCH_BLOCKS:-1000000}
DUMPS=${BENCH_DUMPS:-5}
RUNS=${BENCH_RUNS:-5}
ITERS=${BENCH_ITERS:-2000000}
RESULTS=$B/bench/results-control.txt
. "$(dirname "$0")/lib.sh"

die() {
	echo "bench: $*" >&2
	exit 1
}
for p in "$BENCH" "$CLIENT" "$VAR"; do
	[ -x "$p" ] || die "$p is missing: run 'make bench'"
done
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-ctlbench.XXXXXX")
prog=""
trap '[ -n "$prog" ] && kill "$prog" 2>/dev/null; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

now_us() {
	echo $(($(date +%s%N) / 1000))
}

# The dumps ----------------------------------------------------------------------------
echo "bench: control socket, $BLOCKS blocks, $DUMPS dumps each way" >&2
mkfifo "$WORK/in"
env LD_PRELOAD="$HOOK" LEAKSNAP_CONTROL=1 LEAKSNAP_DUMP_ON_EXIT=0 LEAKSNAP_OUT="$WORK/x" \
	"$BENCH" heap "$BLOCKS" <"$WORK/in" >"$WORK/out" &
prog=$!
exec 3>"$WORK/in"
i=0
until grep -q '^ready ' "$WORK/out"; do
	i=$((i + 1))
	[ $i -le 1200 ] || die "ctlbench did not start"
	sleep 0.1
done
pid=$(sed -n 's/^ready //p' "$WORK/out")
ask() {
	n=$(wc -l <"$WORK/out")
	echo "$1" >&3
	while [ "$(wc -l <"$WORK/out")" -le "$n" ]; do sleep 0.01; done
	sed -n "$((n + 1))p" "$WORK/out"
}
: >"$WORK/file"
: >"$WORK/sock"
for r in $(seq 1 "$DUMPS"); do
	ask reset >/dev/null
	t=$(ask "dump $WORK/f.$r.dump" | sed -n 's/^dump //p')
	[ -n "$t" ] || die "file dump $r failed"
	g=$(ask gap | cut -d' ' -f2)
	echo "$t $g" >>"$WORK/file"
	ask reset >/dev/null
	t0=$(now_us)
	"$CLIENT" -t 120 -o "$WORK/s.$r" "$pid" dump >/dev/null || die "socket dump $r failed"
	t1=$(now_us)
	g=$(ask gap | cut -d' ' -f2)
	echo "$((t1 - t0)) $g" >>"$WORK/sock"
	rm -f "$WORK/f.$r.dump" "$WORK/f.$r.maps"
	size=$(stat -c %s "$WORK/s.$r.1")
	rm -f "$WORK/s.$r.1"
done
echo exit >&3
wait "$prog" || true
prog=""

# The idle thread's cost ----------------------------------------------------------------
echo "bench: idle control thread, varbench 2 threads x $ITERS, $RUNS pairs" >&2
: >"$WORK/off"
: >"$WORK/on"
for r in $(seq 0 "$RUNS"); do
	a=$(env LD_PRELOAD="$HOOK" LEAKSNAP_DUMP_ON_EXIT=0 "$BENCH" cpu "$VAR" 2 "$ITERS" | cut -d' ' -f1)
	b=$(env LD_PRELOAD="$HOOK" LEAKSNAP_DUMP_ON_EXIT=0 LEAKSNAP_CONTROL=1 "$BENCH" cpu "$VAR" 2 "$ITERS" |
		cut -d' ' -f1)
	[ "$r" = 0 ] && continue # (warm-up)
	echo "$a" >>"$WORK/off"
	echo "$b" >>"$WORK/on"
done

col() { # N FILE: column N
	cut -d' ' -f"$1" "$2"
}
med() {
	median | awk '{ printf "%.0f\n", $1 }'
}
spread() {
	sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f..%.0f", lo, hi }'
}
fspread() {
	sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f..%.3f", lo, hi }'
}
ft=$(col 1 "$WORK/file" | med)
fg=$(col 2 "$WORK/file" | med)
st=$(col 1 "$WORK/sock" | med)
sg=$(col 2 "$WORK/sock" | med)
off=$(median <"$WORK/off")
on=$(median <"$WORK/on")
noise=$(sort -n "$WORK/off" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print hi / lo }')
ratio=$(echo "$on $off" | awk '{ print $1 / $2 }')

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
{
	echo "leaksnap benchmark: control socket ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); leaksnap $rev"
	echo "workload: ctlbench, $BLOCKS live blocks; a dump is $size bytes"
	echo "          medians of $DUMPS dumps each way, alternated, one process (min..max)"
	echo ""
	printf '%-34s %12s %s\n' "what" "median" ""
	printf '%-34s %10s us [%s]\n' "file dump, total (leaksnap_dump)" "$ft" "$(col 1 "$WORK/file" | spread)"
	printf '%-34s %10s us [%s]  %.2fx file\n' "socket dump, total (to last byte)" "$st" \
		"$(col 1 "$WORK/sock" | spread)" "$(echo "$st $ft" | awk '{ print $1 / $2 }')"
	printf '%-34s %10s us [%s]\n' "pause, file dump" "$fg" "$(col 2 "$WORK/file" | spread)"
	printf '%-34s %10s us [%s]  %.2fx file: %s\n' "pause, socket dump" "$sg" \
		"$(col 2 "$WORK/sock" | spread)" "$(echo "$sg $fg" | awk '{ print $1 / $2 }')" \
		"$(echo "$sg $fg" | awk '{ print ($1 <= 1.25 * $2 + 1000) ? "the same" : "longer" }')"
	echo ""
	echo "idle control thread: varbench 2 x $ITERS, CPU seconds, medians of $RUNS pairs"
	printf '%-34s %10.3f s [%s]\n' "hook" "$off" "$(fspread <"$WORK/off")"
	printf '%-34s %10.3f s [%s]  %.3fx: %s\n' "hook + LEAKSNAP_CONTROL=1" "$on" \
		"$(fspread <"$WORK/on")" "$ratio" \
		"$(echo "$ratio $noise" | awk '{ print ($1 <= $2) ? "within the noise (max/min " $2 ")" : "above the noise (max/min " $2 ")" }')"
} | tee "$RESULTS"
echo "bench: results in $RESULTS" >&2
