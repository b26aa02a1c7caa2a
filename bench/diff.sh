#!/bin/sh
# bench/diff.sh [BUILD_DIR]: leakdiff on two LEAKSNAP dumps of 1,000,000
# records x 16 frames each: the first is bench/run.sh's dump, the second a
# later snapshot of another run of the same program (every module loaded 48 MiB
# higher, half the stacks shared, other sizes and counts), so nothing matches
# by raw address.  Without symbols.  Reports median wall time and peak RSS
# next to reading one dump (`leaksnap show`) and a plain read of both files;
# the issue's goal is <= 1 s and a peak RSS <= 2x the two files' size.
# The same comparison written as an HTML report (leakdiff --html) is timed
# beside it; the page's size and the time a headless browser takes to draw
# it (navigation start to the end of the page's script, median of 3 loads)
# are reported against the goals: <= 10 MB, <= 2 s, and writing it adds at
# most 25% to leakdiff's time.
# No peer tool compares these dumps (heaptrack_print --diff reads only
# heaptrack's own files), so the floors are the reference.
set -eu
. "$(dirname "$0")/lib.sh"

B=${1:-build}
LS=$B/bin/leaksnap
LD=$B/bin/leakdiff
GEN=$B/bench/gendump
MAXRSS=$B/bench/maxrss
DATA=$B/bench/data
RESULTS=$B/bench/results-diff.txt
HF_JSON=$B/bench/hyperfine-diff.json
HF_LOG=$B/bench/hyperfine-diff.log
RECORDS=1000000
FRAMES=16
RUNS=5
RSS_RUNS=3
GOAL_TIME=1.0
GOAL_RSS=2

die() {
	echo "bench: $*" >&2
	exit 1
}
for tool in "$LS" "$LD" "$GEN" "$MAXRSS"; do
	[ -x "$tool" ] || die "$tool is missing: run 'make bench'"
done
mkdir -p "$DATA"
WORK=$B/bench/.diff.$$
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

A=$DATA/show-${RECORDS}x${FRAMES}-s1.dump
BB=$DATA/diff-${RECORDS}x${FRAMES}-run2.dump
gen() { # OUT [gendump options]
	out=$1
	shift
	[ -s "$out" ] && return 0
	echo "bench: generating $out" >&2
	rm -f "$out.tmp"
	"$GEN" --records "$RECORDS" --frames "$FRAMES" --seed 1 "$@" "$out.tmp" || die "gendump failed"
	mv "$out.tmp" "$out"
}
gen "$A"
gen "$BB" --shift 0x3000000 --shared $((RECORDS / 2)) --stack-seed 2 --values-seed 3
A_BYTES=$(wc -c <"$A" | tr -d ' ')
B_BYTES=$(wc -c <"$BB" | tr -d ' ')
BOTH=$((A_BYTES + B_BYTES))

# Sanity: the shared half matches across the shift, so exactly the other
# half (plus growth of shared stacks) is new.
"$LD" --no-symbols --json --top 0 "$A" "$BB" >"$WORK/check.json" 2>"$WORK/check.err" ||
	{ cat "$WORK/check.err" >&2; die "leakdiff failed"; }
python3 - "$WORK/check.json" "$RECORDS" <<'PYEOF' || die "leakdiff answered wrongly on the benchmark inputs"
import json, sys
j = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
new = sum(1 for s in j["suspects"] + j["stopped"] if s["new"])
# the second half of B's records are new stacks; app records only (zygote left out)
if not (0.4 * n < new < 0.5 * n):
    sys.exit("bench: %d new groups, expected about %d (app records of the unshared half)" % (new, 0.45 * n))
PYEOF

: >"$WORK/results"
say() {
	printf '%s\n' "$*" | tee -a "$WORK/results"
}
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
timer=maxrss
if [ "${BENCH_NO_HYPERFINE:-0}" = 0 ] && command -v hyperfine >/dev/null 2>&1; then
	timer="hyperfine $(hyperfine --version | awk '{ print $2 }')"
fi
say "leaksnap benchmark: leakdiff on two $RECORDS-record x $FRAMES-frame dumps ($(date -u '+%Y-%m-%d %H:%M UTC'))"
say "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
say "leaksnap: $rev, build dir $B"
say "inputs:  $A ($A_BYTES bytes)"
say "         $BB ($B_BYTES bytes; gendump --shift 0x3000000 --shared $((RECORDS / 2)) --stack-seed 2 --values-seed 3)"
[ "$timer" = maxrss ] && RSS_RUNS=$RUNS
say "method:  warm page cache; time = median of $RUNS runs ($timer), RSS = median peak of $RSS_RUNS runs"
say ""

NAMES="a b c f d e"
with() {
	_n=$1
	shift
	case $_n in
	a) "$@" "$LD" --no-symbols "$A" "$BB" ;;
	b) "$@" "$LD" --no-symbols --json "$A" "$BB" ;;
	c) "$@" "$LD" --no-symbols --by site "$A" "$BB" ;;
	f) "$@" "$LD" --no-symbols --html "$WORK/report.html" "$A" "$BB" ;;
	d) "$@" "$LS" show --top 10 "$A" ;;
	e) "$@" cat "$A" "$BB" ;;
	esac
}
label() {
	case $1 in
	a) echo "leakdiff A B" ;;
	b) echo "leakdiff --json A B" ;;
	c) echo "leakdiff --by site A B" ;;
	f) echo "leakdiff --html P A B" ;;
	d) echo "show --top 10 A  (one dump read)" ;;
	e) echo "cat A B  (floor)" ;;
	esac
}
: >"$WORK/times"
if [ "$timer" != maxrss ]; then
	set --
	for n in $NAMES; do
		set -- "$@" --command-name "$(label "$n")" "$(with "$n" quoted) >/dev/null"
	done
	echo "bench: timing with hyperfine ($RUNS runs each, log in $HF_LOG)" >&2
	hyperfine --warmup 1 --runs "$RUNS" --style basic --export-json "$HF_JSON" "$@" \
		>"$HF_LOG" 2>&1 || { cat "$HF_LOG" >&2; die "hyperfine failed"; }
	awk -F: '/"median":/ { gsub(/[ ,]/, "", $2); print $2 }' "$HF_JSON" >"$WORK/medians"
	i=0
	for n in $NAMES; do
		i=$((i + 1))
		echo "$n $(sed -n "${i}p" "$WORK/medians")" >>"$WORK/times"
	done
fi
: >"$WORK/rss"
for n in $NAMES; do
	: >"$WORK/runs"
	i=0
	while [ "$i" -lt "$RSS_RUNS" ]; do
		with "$n" "$MAXRSS" -o "$WORK/runs" >/dev/null || die "$(label "$n") failed"
		i=$((i + 1))
	done
	echo "$n $(awk '{ print $2 }' "$WORK/runs" | median)" >>"$WORK/rss"
	[ "$timer" = maxrss ] && echo "$n $(awk '{ print $1 }' "$WORK/runs" | median)" >>"$WORK/times"
done
value() {
	awk -v n="$2" '$1 == n { print $2 }' "$1"
}
floor=$(value "$WORK/times" e)
say "$(printf '%-34s %9s %10s %12s %9s' command 'time (s)' 'RSS (MiB)' 'RSS/(A+B)' 'time/cat')"
for n in $NAMES; do
	say "$(awk -v l="$(label "$n")" -v t="$(value "$WORK/times" "$n")" -v k="$(value "$WORK/rss" "$n")" \
		-v f="$BOTH" -v c="$floor" 'BEGIN { printf "%-34s %9.3f %10.1f %11.2fx %8.1fx\n",
		l, t, k / 1024, k * 1024 / f, t / c }')"
done
t=$(value "$WORK/times" a)
k=$(value "$WORK/rss" a)
say ""
say "$(awk -v t="$t" -v k="$k" -v f="$BOTH" -v gt="$GOAL_TIME" -v gr="$GOAL_RSS" 'BEGIN {
	r = k * 1024 / f
	printf "goal leakdiff on 2 x 1M x 16: time %.3f s (goal <= %.1f s) %s, RSS %.1f MiB = %.2f x the two files (goal <= %dx) %s\n",
		t, gt, t <= gt ? "PASS" : "FAIL", k / 1024, r, gr, r <= gr ? "PASS" : "FAIL" }')"

# The HTML report: its size, and how long a browser takes to draw it.
"$LD" --no-symbols --html "$WORK/report.html" "$A" "$BB" >/dev/null || die "leakdiff --html failed"
page=$(wc -c <"$WORK/report.html" | tr -d ' ')
printf "document.body.dataset.ready === '1' ? Number(document.body.dataset.renderMs) : -1\n" \
	>"$WORK/render.js"
render=
if python3 "$(dirname "$0")/../tests/tools/browser.py" "$WORK/report.html" >/dev/null 2>&1 ||
	[ $? != 3 ]; then
	: >"$WORK/render"
	for i in 1 2 3; do
		python3 "$(dirname "$0")/../tests/tools/browser.py" --timeout 120 "$WORK/report.html" \
			"$WORK/render.js" >>"$WORK/render" 2>"$WORK/render.err" ||
			{ cat "$WORK/render.err" >&2; die "the browser could not draw the report"; }
	done
	render=$(median <"$WORK/render")
fi
th=$(value "$WORK/times" f)
say "$(awk -v p="$page" -v r="$render" -v t="$t" -v th="$th" 'BEGIN {
	over = 100 * (th - t) / t
	printf "goal --html: page %.2f MB (goal <= 10 MB) %s, writing it adds %.0f%% (goal <= 25%%) %s, ",
		p / 1e6, p <= 10e6 ? "PASS" : "FAIL", over, over <= 25 ? "PASS" : "FAIL"
	if (r == "") printf "browser: none installed\n"
	else printf "drawn in %.2f s by headless chromium (goal <= 2 s) %s\n", r / 1000, r <= 2000 ? "PASS" : "FAIL" }')"
cp "$WORK/results" "$RESULTS"
echo "bench: results in $RESULTS" >&2
