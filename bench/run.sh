#!/bin/sh
# bench/run.sh [BUILD_DIR]: measure `leaksnap show` on a 1,000,000-record x
# 16-frame dump, in both input formats, next to a plain read of the same
# bytes.  Reports median wall time, peak RSS and ratios; see bench/README.md.
#
# Needs BUILD_DIR/bin/leaksnap, BUILD_DIR/bench/gendump and
# BUILD_DIR/bench/maxrss (`make bench` builds them, then runs this script).
# Uses hyperfine for the times when it is installed (and BENCH_NO_HYPERFINE
# is not set to 1), else the wall times of maxrss runs.
# The inputs are generated once into BUILD_DIR/bench/data/ and reused; delete
# that directory to regenerate them (e.g. after changing bench/gendump.c).
set -eu
. "$(dirname "$0")/lib.sh"

B=${1:-build}
LS=$B/bin/leaksnap
GEN=$B/bench/gendump
MAXRSS=$B/bench/maxrss
DATA=$B/bench/data
RESULTS=$B/bench/results-show.txt
HF_JSON=$B/bench/hyperfine-show.json
HF_LOG=$B/bench/hyperfine-show.log

RECORDS=1000000
FRAMES=16
SEED=1
RUNS=5          # timed runs per command (hyperfine), after 1 warmup
RSS_RUNS=3      # maxrss runs per command; the median peak RSS is reported
GOAL_TIME=0.5   # seconds
GOAL_RSS=2      # x the input file size

die() {
	echo "bench: $*" >&2
	exit 1
}

for tool in "$LS" "$GEN" "$MAXRSS"; do
	[ -x "$tool" ] || die "$tool is missing: run 'make bench' (or make $tool)"
done
mkdir -p "$DATA"
WORK=$B/bench/.run.$$ # scratch files, removed on exit
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# Inputs ---------------------------------------------------------------------
DUMP=$DATA/show-${RECORDS}x${FRAMES}-s$SEED.dump
TEXT=$DATA/show-${RECORDS}x${FRAMES}-s$SEED.txt

# gen OUT [gendump options]: create OUT unless it exists.  Written under a
# temporary name first, so an interrupted run never leaves a truncated input.
gen() {
	out=$1
	shift
	[ -s "$out" ] && return 0
	echo "bench: generating $out" >&2
	rm -f "$out.tmp"
	"$GEN" --records "$RECORDS" --frames "$FRAMES" --seed "$SEED" "$@" "$out.tmp" ||
		die "gendump failed"
	mv "$out.tmp" "$out"
}
gen "$DUMP"
gen "$TEXT" --text

# Every input must read cleanly (no error, no warning) and hold all records.
check_input() {
	if ! "$LS" show --top 0 "$1" >"$WORK/check.out" 2>"$WORK/check.err"; then
		cat "$WORK/check.err" >&2
		die "leaksnap show failed on $1"
	fi
	[ -s "$WORK/check.err" ] && { cat "$WORK/check.err" >&2; die "warnings reading $1"; }
	grep -q "^records: *$RECORDS " "$WORK/check.out" ||
		die "$1: expected $RECORDS records, got: $(grep '^records:' "$WORK/check.out")"
}
check_input "$DUMP"
check_input "$TEXT"

DUMP_BYTES=$(wc -c <"$DUMP" | tr -d ' ')
TEXT_BYTES=$(wc -c <"$TEXT" | tr -d ' ')

# Report header ----------------------------------------------------------------
: >"$WORK/results"
say() {
	printf '%s\n' "$*" | tee -a "$WORK/results"
}

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu" ] || cpu=$(uname -m)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
src=$(dirname "$0")/..
rev=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$rev" != unknown ] &&
	[ -n "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	rev="$rev+uncommitted changes"
fi
timer=maxrss
if [ "${BENCH_NO_HYPERFINE:-0}" = 0 ] && command -v hyperfine >/dev/null 2>&1; then
	timer="hyperfine $(hyperfine --version | awk '{ print $2 }')"
fi

say "leaksnap benchmark: show on $RECORDS records x $FRAMES frames ($(date -u '+%Y-%m-%d %H:%M UTC'))"
say "machine: $(nproc) CPUs, $cpu, ${mem:-? GiB} RAM, $(uname -sr)"
say "leaksnap: $rev, build dir $B"
say "inputs:  $DUMP ($DUMP_BYTES bytes, LEAKSNAP v1)"
say "         $TEXT ($TEXT_BYTES bytes, Android text v1.2)"
[ "$timer" = maxrss ] && [ "$RUNS" -gt "$RSS_RUNS" ] && RSS_RUNS=$RUNS
say "method:  warm page cache; time = median of $RUNS runs ($timer)," \
	"RSS = median peak of $RSS_RUNS runs (maxrss)"
say ""

# Commands ---------------------------------------------------------------------
# Each command has a one-letter name; `with NAME PREFIX...` runs PREFIX
# followed by the command's words, so the same argv feeds maxrss and, quoted,
# hyperfine.
NAMES="a b c d e"

with() {
	_n=$1
	shift
	case $_n in
	a) "$@" "$LS" show --json --top 10 "$DUMP" ;;
	b) "$@" "$LS" show --top 10 "$DUMP" ;;
	c) "$@" "$LS" show --json --top 10 "$TEXT" ;;
	d) "$@" cat "$DUMP" ;;
	e) "$@" wc -l "$TEXT" ;;
	esac
}

label() {
	case $1 in
	a) echo "show --json --top 10  LEAKSNAP" ;;
	b) echo "show --top 10         LEAKSNAP" ;;
	c) echo "show --json --top 10  Android text" ;;
	d) echo "cat dump >/dev/null   (floor)" ;;
	e) echo "wc -l text-dump       (floor)" ;;
	esac
}

# The input file the RSS ratio refers to.
input_bytes() {
	case $1 in
	c | e) echo "$TEXT_BYTES" ;;
	*) echo "$DUMP_BYTES" ;;
	esac
}

# Times: "NAME SECONDS" lines in $WORK/times ----------------------------------------
: >"$WORK/times"
if [ "$timer" != maxrss ]; then
	set --
	for n in $NAMES; do
		cmd=$(with "$n" quoted)
		[ "$n" = d ] && cmd="$cmd >/dev/null"
		set -- "$@" --command-name "$(label "$n")" "$cmd"
	done
	echo "bench: timing with hyperfine ($RUNS runs each, log in $HF_LOG)" >&2
	if ! hyperfine --warmup 1 --runs "$RUNS" --style basic --export-json "$HF_JSON" \
		"$@" >"$HF_LOG" 2>&1; then
		cat "$HF_LOG" >&2
		die "hyperfine failed"
	fi
	# The export lists the results in command order, one "median" each.
	awk -F: '/"median":/ { gsub(/[ ,]/, "", $2); print $2 }' "$HF_JSON" >"$WORK/medians"
	i=0
	for n in $NAMES; do
		i=$((i + 1))
		t=$(sed -n "${i}p" "$WORK/medians")
		[ -n "$t" ] || die "no median for command $i in $HF_JSON"
		echo "$n $t" >>"$WORK/times"
	done
fi

# Peak RSS: "NAME KIB" lines in $WORK/rss (and the times, without hyperfine) -------
: >"$WORK/rss"
echo "bench: measuring peak RSS with maxrss ($RSS_RUNS runs each)" >&2
for n in $NAMES; do
	: >"$WORK/runs"
	i=0
	while [ "$i" -lt "$RSS_RUNS" ]; do
		with "$n" "$MAXRSS" -o "$WORK/runs" || die "$(with "$n" quoted) failed"
		i=$((i + 1))
	done
	echo "$n $(awk '{ print $2 }' "$WORK/runs" | median)" >>"$WORK/rss"
	if [ "$timer" = maxrss ]; then
		echo "$n $(awk '{ print $1 }' "$WORK/runs" | median)" >>"$WORK/times"
	fi
done

value() { # FILE NAME
	awk -v n="$2" '$1 == n { print $2 }' "$1"
}

# Table ------------------------------------------------------------------------
floor=$(value "$WORK/times" d)
say "$(printf '%-34s %9s %10s %10s %11s' command 'time (s)' 'RSS (MiB)' 'RSS/file' 'time/cat')"
for n in $NAMES; do
	say "$(awk -v l="$(label "$n")" -v t="$(value "$WORK/times" "$n")" \
		-v k="$(value "$WORK/rss" "$n")" -v f="$(input_bytes "$n")" -v c="$floor" 'BEGIN {
		printf "%-34s %9.3f %10.1f %9.2fx %10.1fx\n", l, t, k / 1024, k * 1024 / f,
			(c > 0 ? t / c : 0)
	}')"
done
say ""

# Goal ------------------------------------------------------------------------
say "$(awk -v t="$(value "$WORK/times" a)" -v k="$(value "$WORK/rss" a)" -v f="$DUMP_BYTES" \
	-v gt="$GOAL_TIME" -v gr="$GOAL_RSS" -v n="$RECORDS" -v fr="$FRAMES" 'BEGIN {
	r = k * 1024 / f
	printf "goal show --json --top 10 on %s x %d: time %.3f s (goal <= %s s) %s, ", \
		(n == 1000000 ? "1M" : n), fr, t, gt, (t <= gt ? "PASS" : "FAIL")
	printf "RSS %.1f MiB = %.2f x file size (goal <= %sx) %s\n", k / 1024, r, gr, \
		(r <= gr ? "PASS" : "FAIL")
}')"

cp "$WORK/results" "$RESULTS"
if [ "$timer" = maxrss ]; then
	echo "bench: results in $RESULTS" >&2
else
	echo "bench: results in $RESULTS, hyperfine data in $HF_JSON" >&2
fi
