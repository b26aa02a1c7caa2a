#!/bin/sh
# bench/run.sh [BUILD_DIR]: measure `leaksnap show` on a 1,000,000-record x
# 16-frame dump, in both input formats, next to a plain read of the same
# bytes.  Reports median wall time, peak RSS and ratios; see bench/README.md.
#
# Needs BUILD_DIR/bin/leaksnap, BUILD_DIR/bench/gendump and
# BUILD_DIR/bench/maxrss (`make bench` builds them, then runs this script).
# Uses hyperfine for the times when it is installed, else maxrss runs.
# The inputs are generated once into BUILD_DIR/bench/data/ and reused; delete
# that directory to regenerate them (e.g. after changing bench/gendump.c).
set -eu

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

# Single-quote $1 for a shell command line.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# Median of the numbers on standard input, one per line.
median() {
	sort -n | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) exit 1
			if (NR % 2) print v[(NR + 1) / 2]
			else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

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
	if ! "$LS" show --top 0 "$1" >"$DATA/check.out" 2>"$DATA/check.err"; then
		cat "$DATA/check.err" >&2
		die "leaksnap show failed on $1"
	fi
	[ -s "$DATA/check.err" ] && { cat "$DATA/check.err" >&2; die "warnings reading $1"; }
	grep -q "^records: *$RECORDS " "$DATA/check.out" ||
		die "$1: expected $RECORDS records, got: $(grep '^records:' "$DATA/check.out")"
	rm -f "$DATA/check.out" "$DATA/check.err"
}
check_input "$DUMP"
check_input "$TEXT"

DUMP_BYTES=$(wc -c <"$DUMP" | tr -d ' ')
TEXT_BYTES=$(wc -c <"$TEXT" | tr -d ' ')

# Report header ----------------------------------------------------------------
: >"$RESULTS.tmp"
say() {
	printf '%s\n' "$*" | tee -a "$RESULTS.tmp"
}

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu" ] || cpu=$(uname -m)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$rev" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	rev="$rev+uncommitted changes"
fi
timer=maxrss
command -v hyperfine >/dev/null 2>&1 && timer="hyperfine $(hyperfine --version | awk '{ print $2 }')"

say "leaksnap benchmark: show on $RECORDS records x $FRAMES frames ($(date -u '+%Y-%m-%d %H:%M UTC'))"
say "machine: $(nproc) CPUs, $cpu, ${mem:-? GiB} RAM, $(uname -sr)"
say "leaksnap: $rev, build dir $B"
say "inputs:  $DUMP ($DUMP_BYTES bytes, LEAKSNAP v1)"
say "         $TEXT ($TEXT_BYTES bytes, Android text v1.2)"
say "method:  warm page cache; time = median of $RUNS runs ($timer), RSS = median peak of $RSS_RUNS runs (maxrss)"
say ""

# Commands ---------------------------------------------------------------------
# name|file the RSS ratio refers to|argv (for maxrss); the hyperfine command
# line is built from the same argv.
NAMES="a b c d e"
label_a="show --json --top 10  LEAKSNAP"
label_b="show --top 10         LEAKSNAP"
label_c="show --json --top 10  Android text"
label_d="cat dump >/dev/null   (floor)"
label_e="wc -l text-dump       (floor)"
bytes_a=$DUMP_BYTES bytes_b=$DUMP_BYTES bytes_c=$TEXT_BYTES bytes_d=$DUMP_BYTES bytes_e=$TEXT_BYTES

argv_of() {
	case $1 in
	a) set -- "$LS" show --json --top 10 "$DUMP" ;;
	b) set -- "$LS" show --top 10 "$DUMP" ;;
	c) set -- "$LS" show --json --top 10 "$TEXT" ;;
	d) set -- cat "$DUMP" ;;
	e) set -- wc -l "$TEXT" ;;
	esac
	line=""
	for w in "$@"; do
		line="$line${line:+ }$(q "$w")"
	done
	printf '%s\n' "$line"
}

# Times ------------------------------------------------------------------------
if [ "$timer" != maxrss ]; then
	set --
	for n in $NAMES; do
		eval "label=\$label_$n"
		cmd=$(argv_of "$n")
		[ "$n" = d ] && cmd="$cmd >/dev/null"
		set -- "$@" --command-name "$label" "$cmd"
	done
	echo "bench: timing with hyperfine ($RUNS runs each, log in $HF_LOG)" >&2
	if ! hyperfine --warmup 1 --runs "$RUNS" --style basic --export-json "$HF_JSON" \
		"$@" >"$HF_LOG" 2>&1; then
		cat "$HF_LOG" >&2
		die "hyperfine failed"
	fi
	# The export lists the results in command order, one "median" each.
	awk -F: '/"median":/ { gsub(/[ ,]/, "", $2); print $2 }' "$HF_JSON" >"$DATA/medians"
	i=0
	for n in $NAMES; do
		i=$((i + 1))
		t=$(sed -n "${i}p" "$DATA/medians")
		[ -n "$t" ] || die "no median for command $i in $HF_JSON"
		eval "time_$n=\$t"
	done
	rm -f "$DATA/medians"
fi

# Peak RSS (and the times, without hyperfine) -------------------------------------
runs=$RSS_RUNS
[ "$timer" = maxrss ] && [ "$RUNS" -gt "$runs" ] && runs=$RUNS
echo "bench: measuring peak RSS with maxrss ($runs runs each)" >&2
for n in $NAMES; do
	: >"$DATA/rss"
	eval "set -- $(argv_of "$n")"
	i=0
	while [ "$i" -lt "$runs" ]; do
		"$MAXRSS" -o "$DATA/rss" "$@" || die "'$*' failed (exit $?)"
		i=$((i + 1))
	done
	eval "rss_$n=\$(awk '{ print \$2 }' \"\$DATA/rss\" | median)"
	[ "$timer" = maxrss ] && eval "time_$n=\$(awk '{ print \$1 }' \"\$DATA/rss\" | median)"
	rm -f "$DATA/rss"
done

# Table ------------------------------------------------------------------------
row() { # label seconds rss_kib file_bytes floor_seconds
	awk -v l="$1" -v t="$2" -v k="$3" -v f="$4" -v c="$5" 'BEGIN {
		printf "%-34s %9.3f %10.1f %9.2fx %10.1fx\n", l, t, k / 1024, k * 1024 / f,
			(c > 0 ? t / c : 0)
	}'
}
say "$(printf '%-34s %9s %10s %10s %11s' command 'time (s)' 'RSS (MiB)' 'RSS/file' 'time/cat')"
for n in $NAMES; do
	eval "say \"\$(row \"\$label_$n\" \"\$time_$n\" \"\$rss_$n\" \"\$bytes_$n\" \"\$time_d\")\""
done
say ""

# Goal ------------------------------------------------------------------------
say "$(awk -v t="$time_a" -v k="$rss_a" -v f="$DUMP_BYTES" -v gt="$GOAL_TIME" -v gr="$GOAL_RSS" \
	-v n="$RECORDS" -v fr="$FRAMES" 'BEGIN {
	r = k * 1024 / f
	printf "goal show --json --top 10 on %s x %d: time %.3f s (goal <= %s s) %s, ", \
		(n == 1000000 ? "1M" : n), fr, t, gt, (t <= gt ? "PASS" : "FAIL")
	printf "RSS %.1f MiB = %.2f x file size (goal <= %sx) %s\n", k / 1024, r, gr, \
		(r <= gr ? "PASS" : "FAIL")
}')"

mv "$RESULTS.tmp" "$RESULTS"
echo "bench: results in $RESULTS${HF_JSON:+, hyperfine data in $HF_JSON}" >&2
