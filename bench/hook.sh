#!/bin/sh
# bench/hook.sh [BUILD_DIR]: the collection benchmark.  Runs allocbench
# (10M malloc/free pairs per thread, sizes 16..4096, call depth ~10, 16
# frames) bare, under libleakhook.so with LEAKSNAP_UNWIND=fp and =auto, and
# under heaptrack, with 1 and 2 threads, all in one run; reports the median
# times and the ratios to the bare run.  See bench/README.md.
set -eu

B=${1:-build}
BENCH=$B/bench/allocbench
HOOK=$(cd "$B/lib" 2>/dev/null && pwd)/libleakhook.so
PAIRS=${BENCH_PAIRS:-10000000}
RUNS=${BENCH_RUNS:-5}
RESULTS=$B/bench/results-hook.txt
HF_JSON=$B/bench/hyperfine-hook.json
HF_LOG=$B/bench/hyperfine-hook.log

die() {
	echo "bench: $*" >&2
	exit 1
}
[ -x "$BENCH" ] || die "$BENCH is missing: run 'make bench'"
[ -f "$HOOK" ] || die "$HOOK is missing: run 'make bench'"
command -v hyperfine >/dev/null 2>&1 || die "hyperfine is not installed (scripts/ensure-deps.sh --bench)"
have_heaptrack=0
command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/leaksnap-hookbench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Every configuration must run and print the same checksum line.
for t in 1 2; do
	want=$("$BENCH" "$t" 1000)
	got=$(env LD_PRELOAD="$HOOK" LEAKSNAP_OUT="$WORK/chk" "$BENCH" "$t" 1000)
	[ "$want" = "$got" ] || die "allocbench under the hook printed '$got', expected '$want'"
done
ls "$WORK"/chk.*.exit.dump >/dev/null 2>&1 || die "the hook wrote no exit dump"

set --
for t in 1 2; do
	set -- "$@" --command-name "bare $t" "$BENCH $t $PAIRS"
	for mode in fp auto; do
		set -- "$@" --command-name "hook-$mode $t" \
			"env LD_PRELOAD=$HOOK LEAKSNAP_UNWIND=$mode LEAKSNAP_OUT=$WORK/d $BENCH $t $PAIRS"
	done
	[ $have_heaptrack = 1 ] &&
		set -- "$@" --command-name "heaptrack $t" "heaptrack -o $WORK/ht $BENCH $t $PAIRS"
done
echo "bench: timing allocbench with hyperfine ($RUNS runs each, log in $HF_LOG)" >&2
# Dumps and heaptrack files of earlier runs are removed before each run.
hyperfine --warmup 1 --runs "$RUNS" --style basic --export-json "$HF_JSON" \
	--prepare "rm -rf $WORK/d.* $WORK/ht*" "$@" >"$HF_LOG" 2>&1 ||
	{ cat "$HF_LOG" >&2; die "hyperfine failed"; }

# name median pairs from the export, in command order
awk -F'"' '/"command":/ { name = $4 } /"median":/ { split($0, a, ":"); gsub(/[ ,]/, "", a[2]); print name, a[2] }' \
	"$HF_JSON" | sed 's/^\([a-z-]*\) \([12]\) /\1 \2 /' >"$WORK/medians"

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
{
	echo "leaksnap benchmark: collection ($(date -u '+%Y-%m-%d %H:%M UTC'))"
	echo "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); leaksnap $rev"
	echo "workload: allocbench THREADS $PAIRS (malloc/free pairs per thread, sizes 16..4096,"
	echo "          call depth 10, blocks filled), 16 frames; median of $RUNS runs (hyperfine)"
	echo ""
	printf '%-18s %10s %10s %s\n' "run" "time (s)" "x bare" "goal"
	for t in 1 2; do
		bare=$(awk -v n="bare $t" '$1 " " $2 == n { print $3 }' "$WORK/medians")
		for what in bare hook-fp hook-auto heaptrack; do
			m=$(awk -v n="$what $t" '$1 " " $2 == n { print $3 }' "$WORK/medians")
			[ -n "$m" ] || continue
			goal=""
			case "$what $t" in
			"hook-fp 1") goal="<= 1.5x" ;;
			"hook-auto 1") goal="<= 2.0x" ;;
			"hook-"*" 2") goal="<= 2.0x" ;;
			esac
			printf '%-18s %10.3f %9.2fx %s\n' "$what ($t thr)" "$m" \
				"$(echo "$m $bare" | awk '{ print $1 / $2 }')" "$goal"
		done
	done
	[ $have_heaptrack = 1 ] || echo "(heaptrack not installed: its rows are missing)"
} | tee "$RESULTS"
echo "bench: results in $RESULTS" >&2
