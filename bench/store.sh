#!/bin/sh
# bench/store.sh [BUILD_DIR]: leaksnap store of a LEAKSNAP dump of
# 1,000,000 records x 16 frames (bench/run.sh's dump: every stack distinct,
# ~66,000 distinct PCs) into a new SQLite store, symbolization of its
# frames included (its modules are not on this host: each is looked for
# and its frames left unknown, as for an Android dump without --symbols).
# Reports the median wall time and peak RSS of a store into a new file,
# of the same dump stored again (found by its content hash: nothing added),
# and of reading the dump alone (`leaksnap show --top 0`), then the store's
# size per record next to the dump's.  The issue's goal: <= 3 s.
set -eu
. "$(dirname "$0")/lib.sh"

B=${1:-build}
LS=$B/bin/leaksnap
GEN=$B/bench/gendump
MAXRSS=$B/bench/maxrss
DATA=$B/bench/data
RESULTS=$B/bench/results-store.txt
RECORDS=1000000
FRAMES=16
RUNS=3
GOAL_TIME=3.0

die() {
	echo "bench: $*" >&2
	exit 1
}
for tool in "$LS" "$GEN" "$MAXRSS"; do
	[ -x "$tool" ] || die "$tool is missing: run 'make bench'"
done
mkdir -p "$DATA"
WORK=$B/bench/.store.$$
rm -rf "$WORK"
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

A=$DATA/show-${RECORDS}x${FRAMES}-s1.dump
if [ ! -s "$A" ]; then
	echo "bench: generating $A" >&2
	rm -f "$A.tmp"
	"$GEN" --records "$RECORDS" --frames "$FRAMES" --seed 1 "$A.tmp" || die "gendump failed"
	mv "$A.tmp" "$A"
fi
A_BYTES=$(wc -c <"$A" | tr -d ' ')
DB=$WORK/store.db

: >"$WORK/results"
say() {
	printf '%s\n' "$*" | tee -a "$WORK/results"
}
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
rev=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
say "leaksnap benchmark: store of a $RECORDS-record x $FRAMES-frame dump into SQLite ($(date -u '+%Y-%m-%d %H:%M UTC'))"
say "machine: $(nproc) CPUs, ${cpu:-$(uname -m)}, $(uname -sr); load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
say "leaksnap: $rev, build dir $B; SQLite $(sqlite3 --version 2>/dev/null | cut -d ' ' -f 1 || echo '?')"
say "input:   $A ($A_BYTES bytes)"
say "method:  warm page cache; median of $RUNS runs (maxrss: wall time, peak RSS)"
say "         (the load average above matters: the store writes on a second thread)"
say ""

# run NAME CMD...: $RUNS runs, each after `prep NAME`; "NAME time rss" appended
run() {
	_n=$1
	shift
	: >"$WORK/runs"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		prep "$_n"
		"$MAXRSS" -o "$WORK/runs" "$@" >/dev/null || die "$_n failed"
		i=$((i + 1))
	done
	echo "$_n $(awk '{ print $1 }' "$WORK/runs" | median) $(awk '{ print $2 }' "$WORK/runs" | median)" \
		>>"$WORK/times"
}
prep() {
	case $1 in
	new) rm -f "$DB" "$DB-wal" "$DB-shm" ;;
	esac
}
: >"$WORK/times"
run new "$LS" store --db "$DB" "$A"
"$LS" store --db "$DB" "$A" >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; die "store failed"; }
grep -q ': already stored$' "$WORK/out" || die "the dump stored again was not found: $(cat "$WORK/out")"
run again "$LS" store --db "$DB" "$A"
run read "$LS" show --top 0 "$A"
label() {
	case $1 in
	new) echo "store A into a new file" ;;
	again) echo "store A again (already stored)" ;;
	read) echo "show --top 0 A (reading alone)" ;;
	esac
}
say "$(printf '%-34s %9s %10s' command 'time (s)' 'RSS (MiB)')"
for n in new again read; do
	say "$(awk -v n="$n" -v l="$(label "$n")" '$1 == n { printf "%-34s %9.3f %10.1f\n", l, $2, $3 / 1024 }' \
		"$WORK/times")"
done
# CPU time of one store (its rows are written on a second thread: on a
# machine whose other core is busy, wall time is no better than this)
if [ -x /usr/bin/time ]; then
	rm -f "$DB" "$DB-wal" "$DB-shm"
	/usr/bin/time -f '%U %S' -o "$WORK/cpu" "$LS" store --db "$DB" "$A" >/dev/null || die "store failed"
	say "$(awk '{ printf "cpu of one store into a new file: user %.2f s, system %.2f s\n", $1, $2 }' \
		"$WORK/cpu")"
fi
db=$(wc -c <"$DB" | tr -d ' ')
[ -e "$DB-wal" ] && db=$((db + $(wc -c <"$DB-wal" | tr -d ' ')))
t=$(awk '$1 == "new" { print $2 }' "$WORK/times")
say ""
say "$(awk -v d="$db" -v a="$A_BYTES" -v n="$RECORDS" 'BEGIN {
	printf "size: the store %d bytes = %.1f bytes per record; the dump %d bytes = %.1f bytes per record (store/dump %.2f)\n",
		d, d / n, a, a / n, d / a }')"
say "$(awk -v t="$t" -v g="$GOAL_TIME" 'BEGIN {
	printf "goal store of 1M x 16 into SQLite: %.3f s (goal <= %.1f s) %s\n", t, g, t <= g ? "PASS" : "FAIL" }')"
cp "$WORK/results" "$RESULTS"
echo "bench: results in $RESULTS" >&2
